import { parse, parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { mergeData, type Protected } from '../../lib/config/merge.ts';

const base = `# Chat backend
apiVersion: apps/v1
kind: Deployment
metadata:
  name: backend
  namespace: confighubplaceholder
spec:
  replicas: 1 # demo size
  template:
    spec:
      containers:
        - name: backend
          image: ghcr.io/chat/backend:v1
          env:
            - name: CHAT_TITLE
              value: Cubby Chat
            - name: LOG_LEVEL
              value: info
          ports:
            - containerPort: 8080
        - name: proxy
          image: ghcr.io/chat/proxy:v1
`;
const edit = (text: string, f: (d: any) => void) => {
  const docs = parseAllDocuments(text);
  const js = docs.map((d) => d.toJS());
  f(js);
  return js.map((d) => JSON.stringify(d)).join('\n---\n');
};
const js = (text: string) => parseAllDocuments(text).map((d) => d.toJS());
const containers = (text: string) => js(text)[0].spec.template.spec.containers;

interface Case {
  name: string;
  upstream: (d: any[]) => void;
  downstream: (d: any[]) => void;
  protect?: Protected[];
  expect: (d: any[]) => void;
  held?: { Path: string; UpstreamValue?: unknown; DownstreamValue?: unknown }[];
}

const D = 'Deployment/backend';
const cases: Case[] = [
  {
    name: 'an upstream map change reaches a downstream that changed another path',
    upstream: (d) => (d[0].spec.replicas = 3),
    downstream: (d) => (d[0].metadata.namespace = 'chat'),
    expect: (d) => expect([d[0].spec.replicas, d[0].metadata.namespace]).toEqual([3, 'chat']),
  },
  {
    name: 'named list items are matched by name, not index',
    upstream: (d) => (d[0].spec.template.spec.containers[1].image = 'ghcr.io/chat/proxy:v2'),
    downstream: (d) => d[0].spec.template.spec.containers.reverse(),
    expect: (d) =>
      expect(d[0].spec.template.spec.containers.map((c: any) => [c.name, c.image])).toEqual([
        ['proxy', 'ghcr.io/chat/proxy:v2'],
        ['backend', 'ghcr.io/chat/backend:v1'],
      ]),
  },
  {
    name: 'env vars are matched by name inside a named container',
    upstream: (d) => (d[0].spec.template.spec.containers[0].env[1].value = 'debug'),
    downstream: (d) => d[0].spec.template.spec.containers[0].env.unshift({ name: 'REGION', value: 'eu' }),
    expect: (d) =>
      expect(d[0].spec.template.spec.containers[0].env).toEqual([
        { name: 'REGION', value: 'eu' },
        { name: 'CHAT_TITLE', value: 'Cubby Chat' },
        { name: 'LOG_LEVEL', value: 'debug' },
      ]),
  },
  {
    name: 'an added container and an added port arrive; ports are keyed by containerPort',
    upstream: (d) => {
      d[0].spec.template.spec.containers.push({ name: 'metrics', image: 'm:v1' });
      d[0].spec.template.spec.containers[0].ports.push({ containerPort: 9090 });
    },
    downstream: () => {},
    expect: (d) => {
      expect(d[0].spec.template.spec.containers.map((c: any) => c.name)).toEqual(['backend', 'proxy', 'metrics']);
      expect(d[0].spec.template.spec.containers[0].ports).toEqual([{ containerPort: 8080 }, { containerPort: 9090 }]);
    },
  },
  {
    name: 'an added resource is appended and a deleted resource removed',
    upstream: (d) => d.push({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'backend' } }),
    downstream: () => {},
    expect: (d) => expect(d.map((x) => x.kind)).toEqual(['Deployment', 'Service']),
  },
  {
    name: 'both sides change one path without protection: the upstream value wins',
    upstream: (d) => (d[0].spec.template.spec.containers[0].env[0].value = 'Cubby Chat 2.0'),
    downstream: (d) => (d[0].spec.template.spec.containers[0].env[0].value = 'Cubby Chat (dev)'),
    expect: (d) => expect(d[0].spec.template.spec.containers[0].env[0].value).toBe('Cubby Chat 2.0'),
  },
  {
    name: 'both sides change one path with protection: the downstream value stays and a conflict is held',
    upstream: (d) => {
      d[0].spec.template.spec.containers[0].env[0].value = 'Cubby Chat 2.0';
      d[0].spec.replicas = 3;
    },
    downstream: (d) => (d[0].spec.template.spec.containers[0].env[0].value = 'Cubby Chat (dev)'),
    protect: [{ Resource: D, Path: 'spec.template.spec.containers.?name=backend.env.?name=CHAT_TITLE.value' }],
    expect: (d) => {
      expect(d[0].spec.template.spec.containers[0].env[0].value).toBe('Cubby Chat (dev)');
      expect(d[0].spec.replicas).toBe(3);
    },
    held: [
      {
        Path: 'spec.template.spec.containers.?name=backend.env.?name=CHAT_TITLE.value',
        UpstreamValue: 'Cubby Chat 2.0',
        DownstreamValue: 'Cubby Chat (dev)',
      },
    ],
  },
  {
    name: 'a protected path the upstream set to the same value holds nothing',
    upstream: (d) => (d[0].spec.replicas = 5),
    downstream: (d) => (d[0].spec.replicas = 5),
    protect: [{ Resource: D, Path: 'spec.replicas' }],
    expect: (d) => expect(d[0].spec.replicas).toBe(5),
    held: [],
  },
  {
    name: 'a deleted key upstream is deleted downstream',
    upstream: (d) => delete d[0].metadata.namespace,
    downstream: () => {},
    expect: (d) => expect(d[0].metadata.namespace).toBeUndefined(),
  },
];

describe('three-way merge by path', () => {
  it.each(cases)('$name', (c) => {
    const upstreamEnd = edit(base, c.upstream);
    const downstream = edit(base, c.downstream);
    const r = mergeData('Kubernetes/YAML', base, upstreamEnd, downstream, c.protect ?? []);
    c.expect(js(r.data));
    if (c.held)
      expect(
        r.held.map(({ Path, UpstreamValue, DownstreamValue }) => ({ Path, UpstreamValue, DownstreamValue })),
      ).toEqual(c.held);
    else expect(r.held).toEqual([]);
  });

  it('an upstream that adds a resource the downstream already has takes its values and keeps downstream-only fields', () => {
    const r = mergeData(
      'Kubernetes/YAML',
      '',
      'kind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 3\n',
      'kind: Deployment\nmetadata:\n  name: web\n  namespace: team\nspec:\n  replicas: 1\n',
      [],
    );
    expect(js(r.data)[0]).toEqual({
      kind: 'Deployment',
      metadata: { name: 'web', namespace: 'team' },
      spec: { replicas: 3 },
    });
  });

  it('keeps comments and key order of the downstream', () => {
    const upstreamEnd = base.replace('replicas: 1 # demo size', 'replicas: 3 # demo size');
    const downstream = base.replace('namespace: confighubplaceholder', 'namespace: chat # filled by variant create');
    const r = mergeData('Kubernetes/YAML', base, upstreamEnd, downstream, []);
    expect(r.data).toContain('# Chat backend');
    expect(r.data).toContain('replicas: 3 # demo size');
    expect(r.data).toContain('namespace: chat # filled by variant create');
    expect(r.data.indexOf('metadata')).toBeLessThan(r.data.indexOf('spec'));
    expect(containers(r.data)[0].name).toBe('backend');
  });

  it('merges AppConfig JSON and properties by key', () => {
    const j = mergeData('AppConfig/JSON', '{"a":1,"b":{"c":1}}', '{"a":2,"b":{"c":1}}', '{"a":1,"b":{"c":9}}', []);
    expect(JSON.parse(j.data)).toEqual({ a: 2, b: { c: 9 } });
    const p = mergeData('AppConfig/Properties', 'a=1\nb=1\n', 'a=2\nb=1\n', 'a=1\nb=7\n', [
      { Resource: '', Path: 'a' },
    ]);
    expect(p.data).toBe('a=1\nb=7\n');
    expect(p.held).toEqual([{ Resource: '', Path: 'a', Op: 'Update', UpstreamValue: '2', DownstreamValue: '1' }]);
    expect(parse(mergeData('AppConfig/YAML', 'x: 1\ny: 1\n', 'x: 2\ny: 1\n', 'x: 1\ny: 3\n', []).data)).toEqual({
      x: 2,
      y: 3,
    });
  });
});
