import { readFileSync } from 'node:fs';
import { parse, parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { diffData } from '../../lib/config/diff.ts';
import { runFunction } from '../../lib/config/functions.ts';
import { compress, dataHash, decompress } from '../../lib/config/hash.ts';
import { formatPath, parsePath } from '../../lib/config/paths.ts';

const backend = readFileSync(new URL('../fixtures/cubbychat/backend.yaml', import.meta.url), 'utf8');
const docs = (text: string) => parseAllDocuments(text).map((d) => d.toJS());
const deployment = (text: string) => docs(text)[0];

describe('functions change exactly what they name', () => {
  it('set-replicas sets spec.replicas and keeps comments and key order', () => {
    const r = runFunction('set-replicas', ['3'], backend);
    expect(deployment(r.data).spec.replicas).toBe(3);
    expect(r.data).toContain('# The chat backend.');
    expect(r.data.indexOf('selector')).toBeGreaterThan(r.data.indexOf('replicas'));
    expect(r.written).toEqual([{ Resource: 'Deployment/backend', Path: 'spec.replicas' }]);
  });

  it('set-image-reference-by-uri changes only containers from that repository', () => {
    const r = runFunction('set-image-reference-by-uri', ['ghcr.io/cubbychat/backend', ':v452'], backend);
    const c = deployment(r.data).spec.template.spec.containers;
    expect(c[0].image).toBe('ghcr.io/cubbychat/backend:v452');
    expect(c[1].image).toBe('ghcr.io/cubbychat/proxy:v3');
    expect(r.written).toEqual([
      { Resource: 'Deployment/backend', Path: 'spec.template.spec.containers.?name=backend.image' },
    ]);
  });

  it('set-image-reference-by-uri takes a digest', () => {
    const digest = '@sha256:' + 'a'.repeat(64);
    const r = runFunction('set-image-reference-by-uri', ['ghcr.io/cubbychat/backend', digest], backend);
    expect(deployment(r.data).spec.template.spec.containers[0].image).toBe('ghcr.io/cubbychat/backend' + digest);
  });

  it('set-container-image-reference keeps the repository of the named container', () => {
    const r = runFunction('set-container-image-reference', ['sidecar', ':v4'], backend);
    expect(deployment(r.data).spec.template.spec.containers[1].image).toBe('ghcr.io/cubbychat/proxy:v4');
  });

  it('set-container-image replaces the whole image', () => {
    const r = runFunction('set-container-image', ['backend', 'nginx:1.27'], backend);
    expect(deployment(r.data).spec.template.spec.containers[0].image).toBe('nginx:1.27');
  });

  it('set-env-var updates an existing variable and adds a new one', () => {
    const r1 = runFunction('set-env-var', ['backend', 'CHAT_TITLE', 'Cubby Chat 2.0'], backend);
    expect(deployment(r1.data).spec.template.spec.containers[0].env).toEqual([
      { name: 'CHAT_TITLE', value: 'Cubby Chat 2.0' },
    ]);
    expect(r1.written[0]!.Path).toBe('spec.template.spec.containers.?name=backend.env.?name=CHAT_TITLE.value');
    const r2 = runFunction('set-env-var', ['sidecar', 'MODE', 'proxy'], backend);
    expect(deployment(r2.data).spec.template.spec.containers[1].env).toEqual([{ name: 'MODE', value: 'proxy' }]);
  });

  it('set-label, set-annotation and set-namespace touch every resource', () => {
    const labelled = docs(runFunction('set-label', ['tier', 'backend'], backend).data);
    expect(labelled.map((d) => d.metadata.labels.tier)).toEqual(['backend', 'backend']);
    const annotated = docs(runFunction('set-annotation', ['owner', 'chat-team'], backend).data);
    expect(annotated.map((d) => d.metadata.annotations.owner)).toEqual(['chat-team', 'chat-team']);
    const ns = docs(runFunction('set-namespace', ['cubbychat'], backend).data);
    expect(ns.map((d) => d.metadata.namespace)).toEqual(['cubbychat', 'cubbychat']);
    const nsDoc = runFunction(
      'set-namespace',
      ['cubbychat'],
      'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: confighubplaceholder\n',
    );
    expect(parse(nsDoc.data).metadata.name).toBe('cubbychat');
  });

  it('get-placeholders and vet-placeholders report what is left', () => {
    const r = runFunction('get-placeholders', [], backend);
    expect(r.output).toEqual([
      { Resource: 'Deployment/backend', Path: 'metadata.namespace' },
      { Resource: 'Service/backend', Path: 'metadata.namespace' },
    ]);
    expect(r.data).toBe(backend);
    expect((runFunction('vet-placeholders', [], backend).output as { Passed: boolean }).Passed).toBe(false);
    const filled = runFunction('set-namespace', ['chat'], backend).data;
    expect(runFunction('vet-placeholders', [], filled).output).toEqual({ Passed: true, Details: [] });
  });

  const bad: [string, string[], RegExp][] = [
    ['set-replicas', ['three'], /<replicas> must be a non-negative integer, got 'three'/],
    ['set-replicas', [], /set-replicas needs <replicas>/],
    ['set-replicas', ['1', '2'], /takes 1 argument/],
    ['set-image-reference-by-uri', ['ghcr.io/x', 'v1'], /must be ':<tag>' or '@sha256:<digest>', got 'v1'/],
    ['set-frobnicate', [], /unknown function 'set-frobnicate'/],
    ['set-env-var', ['--nope=1', 'a', 'b'], /has no parameter 'nope'/],
  ];
  it.each(bad)('%s %j is refused', (name, args, msg) => {
    expect(() => runFunction(name, args, backend)).toThrow(msg);
  });

  it('takes named arguments as --param=value', () => {
    const r = runFunction(
      'set-image-reference-by-uri',
      ['--repository-uri=ghcr.io/cubbychat/backend', '--image-reference=:v9'],
      backend,
    );
    expect(deployment(r.data).spec.template.spec.containers[0].image).toBe('ghcr.io/cubbychat/backend:v9');
  });
});

describe('diff names changes by path, lists by key', () => {
  it('reports a replica change and an env change by container and variable name', () => {
    const after = runFunction(
      'set-env-var',
      ['backend', 'CHAT_TITLE', 'X'],
      runFunction('set-replicas', ['2'], backend).data,
    ).data;
    expect(diffData('Kubernetes/YAML', backend, after)).toEqual([
      { Resource: 'Deployment/backend', Path: 'spec.replicas', Op: 'Update', Value: 2 },
      {
        Resource: 'Deployment/backend',
        Path: 'spec.template.spec.containers.?name=backend.env.?name=CHAT_TITLE.value',
        Op: 'Update',
        Value: 'X',
      },
    ]);
  });

  it('reports added and deleted resources and keys', () => {
    const before = 'kind: ConfigMap\nmetadata:\n  name: a\ndata:\n  x: "1"\n';
    const after = 'kind: ConfigMap\nmetadata:\n  name: a\ndata:\n  y: "2"\n---\nkind: Secret\nmetadata:\n  name: s\n';
    expect(diffData('Kubernetes/YAML', before, after)).toEqual([
      { Resource: 'ConfigMap/a', Path: 'data.x', Op: 'Delete' },
      { Resource: 'ConfigMap/a', Path: 'data.y', Op: 'Add', Value: '2' },
      { Resource: 'Secret/s', Path: '', Op: 'Add', Value: { kind: 'Secret', metadata: { name: 's' } } },
    ]);
  });

  it('replaces a list without keys as a whole', () => {
    expect(diffData('AppConfig/YAML', 'a: [1, 2]\n', 'a: [2, 1]\n')).toEqual([
      { Resource: '', Path: 'a', Op: 'Replace', Value: [2, 1] },
    ]);
  });
});

describe('paths and hashing', () => {
  it('round-trips paths with dotted keys and named items', () => {
    const p = formatPath(['metadata', 'labels', 'app.kubernetes.io/name']);
    expect(p).toBe('metadata.labels["app.kubernetes.io/name"]');
    expect(parsePath(p)).toEqual(['metadata', 'labels', 'app.kubernetes.io/name']);
    expect(parsePath('spec.containers.?name=web.image')).toEqual([
      'spec',
      'containers',
      { key: 'name', value: 'web' },
      'image',
    ]);
  });
  it('hashes data as sha256 hex and compresses losslessly', () => {
    expect(dataHash('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(decompress(compress(backend))).toBe(backend);
    expect(compress(backend.repeat(50)).length).toBeLessThan(backend.length * 5);
  });
});
