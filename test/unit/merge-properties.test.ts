import { fc, test } from '@fast-check/vitest';
import { parse as parseOne, stringify } from 'yaml';
import { describe, expect } from 'vitest';
import { mergeData } from '../../lib/config/merge.ts';

// Three-way merge properties over random added/added maps and named lists: what only one side added survives.
const key = fc.stringMatching(/^[a-z][a-z0-9-]{0,8}$/);
const value = fc.stringMatching(/^[a-z0-9]{1,6}$/);
const labels = fc.dictionary(key, value, { minKeys: 1, maxKeys: 5 });
const service = (extra: Record<string, unknown> = {}) =>
  stringify({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'acme', namespace: 'acme', ...extra },
    spec: { ports: [{ port: 80 }] },
  });
const labelsOf = (data: string) => ((parseOne(data) as any).metadata.labels ?? {}) as Record<string, string>;

describe('three-way merge of what both sides added', () => {
  test.prop([labels, labels])(
    'keeps every label each side added to a map the base lacked; on a shared key the upstream value wins',
    (up, down) => {
      const base = service();
      const merged = mergeData('Kubernetes/YAML', base, service({ labels: up }), service({ labels: down }), []);
      expect(labelsOf(merged.data)).toEqual({ ...down, ...up });
      expect(merged.held).toEqual([]);
    },
  );

  const clash = fc.tuple(key, value, value).filter(([, u, d]) => u !== d);
  test.prop([labels, labels, clash])(
    'holds a protected shared key at the downstream value and reports the upstream one',
    (upRest, downRest, [shared, u, d]) => {
      const up = { ...upRest, [shared]: u };
      const down = { ...downRest, [shared]: d };
      const merged = mergeData('Kubernetes/YAML', service(), service({ labels: up }), service({ labels: down }), [
        { Resource: 'Service/acme', Path: `metadata.labels.${shared}` },
      ]);
      expect(labelsOf(merged.data)).toEqual({ ...down, ...up, [shared]: d });
      expect(merged.held.map((h) => [h.Path, h.UpstreamValue, h.DownstreamValue])).toEqual([
        [`metadata.labels.${shared}`, u, d],
      ]);
    },
  );

  const containers = fc.uniqueArray(fc.record({ name: key, image: value }), {
    selector: (c) => c.name,
    minLength: 1,
    maxLength: 4,
  });
  const deployment = (cs?: { name: string; image: string }[]) =>
    stringify({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'acme', namespace: 'acme' },
      spec: { template: { spec: cs ? { containers: cs } : {} } },
    });
  const containersOf = (data: string) =>
    new Map(
      ((parseOne(data) as any).spec.template.spec.containers as { name: string; image: string }[]).map((c) => [
        c.name,
        c.image,
      ]),
    );

  test.prop([containers, containers])(
    'keeps the named list items each side added to a list the base lacked',
    (up, down) => {
      const merged = mergeData('Kubernetes/YAML', deployment(), deployment(up), deployment(down), []);
      expect(containersOf(merged.data)).toEqual(
        new Map([...down, ...up].map((c) => [c.name, up.find((u) => u.name === c.name)?.image ?? c.image])),
      );
    },
  );

  test.prop([labels])('merging a change the downstream already has changes nothing', (up) => {
    const end = service({ labels: up });
    expect(mergeData('Kubernetes/YAML', service(), end, end, []).data).toBe(end);
  });
});
