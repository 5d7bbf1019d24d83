import type { Document } from 'yaml';
import { Invalid } from '../model/errors.ts';
import { parseYaml, resourceKey, stringifyYaml } from './documents.ts';
import { formatPath, parsePath, type Segment } from './paths.ts';

/** The placeholder values a base leaves for variants to fill. */
export const PLACEHOLDER_STRING = 'confighubplaceholder';
export const PLACEHOLDER_INT = 999999999;

/** A path a function wrote (for `--protect`) or a placeholder it found. */
export interface ResourcePath {
  Resource: string;
  Path: string;
}

/** What running a function on one unit's data produced. */
export interface FunctionResult {
  data: string;
  written: ResourcePath[];
  output?: unknown;
}

interface Param {
  name: string;
  kind: 'string' | 'int' | 'imageRef';
}

interface FunctionDef {
  description: string;
  params: Param[];
  readOnly: boolean;
  run(docs: Document.Parsed[], args: Record<string, string | number>, written: ResourcePath[]): unknown;
}

const POD_SPEC_PATHS: Record<string, string[]> = {
  Pod: ['spec'],
  CronJob: ['spec', 'jobTemplate', 'spec', 'template', 'spec'],
};
const WORKLOADS_WITH_TEMPLATE = new Set([
  'Deployment',
  'StatefulSet',
  'DaemonSet',
  'ReplicaSet',
  'Job',
  'ReplicationController',
]);
const SCALABLE = new Set(['Deployment', 'StatefulSet', 'ReplicaSet', 'ReplicationController']);
const CLUSTER_SCOPED = new Set([
  'Namespace',
  'ClusterRole',
  'ClusterRoleBinding',
  'CustomResourceDefinition',
  'PersistentVolume',
  'StorageClass',
  'PriorityClass',
  'IngressClass',
  'MutatingWebhookConfiguration',
  'ValidatingWebhookConfiguration',
  'APIService',
  'Node',
]);

function podSpecPath(kind: string): string[] | undefined {
  return POD_SPEC_PATHS[kind] ?? (WORKLOADS_WITH_TEMPLATE.has(kind) ? ['spec', 'template', 'spec'] : undefined);
}

interface ContainerRef {
  doc: Document.Parsed;
  resource: string;
  /** YAML path (with indexes) to the container. */
  at: (string | number)[];
  /** Mutation path (with `?name=`) to the container. */
  seg: Segment[];
  container: Record<string, unknown>;
}

function containers(docs: Document.Parsed[]): ContainerRef[] {
  const out: ContainerRef[] = [];
  for (const doc of docs) {
    const js = doc.toJS() as Record<string, unknown>;
    const base = podSpecPath(String(js.kind));
    if (!base) continue;
    let spec: unknown = js;
    for (const p of base) spec = (spec as Record<string, unknown> | undefined)?.[p];
    for (const field of ['initContainers', 'containers']) {
      const list = (spec as Record<string, unknown> | undefined)?.[field];
      if (!Array.isArray(list)) continue;
      list.forEach((c: Record<string, unknown>, i) => {
        out.push({
          doc,
          resource: resourceKey(js),
          at: [...base, field, i],
          seg: [...base, field, { key: 'name', value: String(c.name) }],
          container: c,
        });
      });
    }
  }
  return out;
}

/** `repo:tag`, `repo@sha256:…` or `host:port/repo:tag` → the repository part. */
export function imageRepository(image: string): string {
  const at = image.indexOf('@');
  const noDigest = at >= 0 ? image.slice(0, at) : image;
  const slash = noDigest.lastIndexOf('/');
  const colon = noDigest.lastIndexOf(':');
  return colon > slash ? noDigest.slice(0, colon) : noDigest;
}

function setContainerField(ref: ContainerRef, field: string, value: unknown, written: ResourcePath[]): void {
  ref.doc.setIn([...ref.at, field], value);
  written.push({ Resource: ref.resource, Path: formatPath([...ref.seg, field]) });
}

function named(docs: Document.Parsed[], name: string): ContainerRef[] {
  const found = containers(docs).filter((c) => c.container.name === name);
  return found;
}

/** set-label and set-annotation: one key of a metadata map, on every resource. */
function metadataEntry(field: 'labels' | 'annotations', description: string): FunctionDef {
  return {
    description,
    params: [
      { name: 'key', kind: 'string' },
      { name: 'value', kind: 'string' },
    ],
    readOnly: false,
    run(docs, args, written) {
      for (const doc of docs) {
        doc.setIn(['metadata', field, args.key], args.value);
        written.push({ Resource: resourceKey(doc.toJS()), Path: formatPath(['metadata', field, String(args.key)]) });
      }
    },
  };
}

const FUNCTIONS: Record<string, FunctionDef> = {
  'set-image-reference-by-uri': {
    description: 'set the tag or digest of every container whose image is from the repository',
    params: [
      { name: 'repository-uri', kind: 'string' },
      { name: 'image-reference', kind: 'imageRef' },
    ],
    readOnly: false,
    run(docs, args, written) {
      for (const c of containers(docs)) {
        if (typeof c.container.image === 'string' && imageRepository(c.container.image) === args['repository-uri']) {
          setContainerField(c, 'image', `${args['repository-uri']}${args['image-reference']}`, written);
        }
      }
    },
  },
  'set-container-image-reference': {
    description: "set the tag or digest of the named container's image",
    params: [
      { name: 'container-name', kind: 'string' },
      { name: 'image-reference', kind: 'imageRef' },
    ],
    readOnly: false,
    run(docs, args, written) {
      for (const c of named(docs, String(args['container-name']))) {
        const repo = imageRepository(String(c.container.image ?? ''));
        setContainerField(c, 'image', `${repo}${args['image-reference']}`, written);
      }
    },
  },
  'set-container-image': {
    description: "set the named container's whole image",
    params: [
      { name: 'container-name', kind: 'string' },
      { name: 'container-image', kind: 'string' },
    ],
    readOnly: false,
    run(docs, args, written) {
      for (const c of named(docs, String(args['container-name'])))
        setContainerField(c, 'image', args['container-image'], written);
    },
  },
  'set-replicas': {
    description: 'set spec.replicas of every scalable workload',
    params: [{ name: 'replicas', kind: 'int' }],
    readOnly: false,
    run(docs, args, written) {
      for (const doc of docs) {
        const js = doc.toJS() as Record<string, unknown>;
        if (!SCALABLE.has(String(js.kind))) continue;
        doc.setIn(['spec', 'replicas'], args.replicas);
        written.push({ Resource: resourceKey(js), Path: 'spec.replicas' });
      }
    },
  },
  'set-label': metadataEntry('labels', 'set a label on every resource'),
  'set-annotation': metadataEntry('annotations', 'set an annotation on every resource'),
  'set-namespace': {
    description: 'set the namespace of every namespaced resource (and name the Namespace resource)',
    params: [{ name: 'namespace', kind: 'string' }],
    readOnly: false,
    run(docs, args, written) {
      for (const doc of docs) {
        const js = doc.toJS() as Record<string, unknown>;
        const key = resourceKey(js);
        if (js.kind === 'Namespace') {
          doc.setIn(['metadata', 'name'], args.namespace);
          written.push({ Resource: key, Path: 'metadata.name' });
        } else if (!CLUSTER_SCOPED.has(String(js.kind))) {
          doc.setIn(['metadata', 'namespace'], args.namespace);
          written.push({ Resource: key, Path: 'metadata.namespace' });
        }
      }
    },
  },
  'set-env-var': {
    description: 'set an environment variable of the named container',
    params: [
      { name: 'container-name', kind: 'string' },
      { name: 'env-var', kind: 'string' },
      { name: 'env-value', kind: 'string' },
    ],
    readOnly: false,
    run(docs, args, written) {
      for (const c of named(docs, String(args['container-name']))) {
        const env = Array.isArray(c.container.env) ? (c.container.env as Record<string, unknown>[]) : undefined;
        const i = env?.findIndex((e) => e.name === args['env-var']) ?? -1;
        if (env && i >= 0) {
          c.doc.setIn([...c.at, 'env', i, 'value'], args['env-value']);
          if (env[i]?.valueFrom !== undefined) c.doc.deleteIn([...c.at, 'env', i, 'valueFrom']);
        } else if (env)
          c.doc.addIn([...c.at, 'env'], c.doc.createNode({ name: args['env-var'], value: args['env-value'] }));
        else c.doc.setIn([...c.at, 'env'], c.doc.createNode([{ name: args['env-var'], value: args['env-value'] }]));
        written.push({
          Resource: c.resource,
          Path: formatPath([...c.seg, 'env', { key: 'name', value: String(args['env-var']) }, 'value']),
        });
      }
    },
  },
  'set-string-path': {
    description: 'set a string at a path of every resource of a type (apiVersion/kind), such as a ConfigMap data key',
    params: [
      { name: 'resource-type', kind: 'string' },
      { name: 'path', kind: 'string' },
      { name: 'value', kind: 'string' },
    ],
    readOnly: false,
    run(docs, args, written) {
      const segments = parsePath(String(args.path));
      if (!segments.length) throw new Invalid('set-string-path: <path> is empty');
      const bad = segments.find((s) => typeof s !== 'string' || s === '');
      if (bad !== undefined)
        throw new Invalid(
          `set-string-path: <path> '${String(args.path)}' must name map keys (a.b or a["b.c"]), not list items`,
        );
      for (const doc of docs) {
        const js = doc.toJS() as Record<string, unknown>;
        if (!js || `${String(js.apiVersion)}/${String(js.kind)}` !== args['resource-type']) continue;
        try {
          doc.setIn(segments as string[], String(args.value));
        } catch {
          throw new Invalid(
            `set-string-path: ${resourceKey(js)} has no map at '${String(args.path)}' to set a string in`,
          );
        }
        written.push({ Resource: resourceKey(js), Path: formatPath(segments) });
      }
    },
  },
  'get-placeholders': {
    description: `list the paths still holding ${PLACEHOLDER_STRING} or ${PLACEHOLDER_INT}`,
    params: [],
    readOnly: true,
    run(docs) {
      return findPlaceholders(docs);
    },
  },
  'vet-placeholders': {
    description: 'pass when no placeholder is left',
    params: [],
    readOnly: true,
    run(docs) {
      const left = findPlaceholders(docs);
      return { Passed: left.length === 0, Details: left.map((p) => `${p.Resource} ${p.Path}`) };
    },
  },
};

function findPlaceholders(docs: Document.Parsed[]): ResourcePath[] {
  return findPlaceholderValues(docs.map((d) => d.toJS() as Record<string, unknown>));
}

/** The paths of resources (as values) still holding a placeholder. */
export function findPlaceholderValues(docs: Record<string, unknown>[]): ResourcePath[] {
  const out: ResourcePath[] = [];
  for (const js of docs) {
    const resource = resourceKey(js);
    // The path is kept as a chain to the parent and spelled out only where a placeholder is found: linear in the data.
    type Chain = { seg: Segment; up?: Chain } | undefined;
    const spell = (c: Chain): Segment[] => {
      const segs: Segment[] = [];
      for (let at = c; at; at = at.up) segs.unshift(at.seg);
      return segs;
    };
    const walk = (v: unknown, path: Chain) => {
      if (v === PLACEHOLDER_INT || (typeof v === 'string' && v.includes(PLACEHOLDER_STRING)))
        out.push({ Resource: resource, Path: formatPath(spell(path)) });
      else if (Array.isArray(v)) {
        v.forEach((item, i) => {
          const name = item && typeof item === 'object' ? (item as Record<string, unknown>).name : undefined;
          walk(item, { seg: typeof name === 'string' ? { key: 'name', value: name } : String(i), up: path });
        });
      } else if (v && typeof v === 'object')
        for (const k in v) walk((v as Record<string, unknown>)[k], { seg: k, up: path });
    };
    walk(js, undefined);
  }
  return out;
}

/** The names and parameters of the functions, for `cub function list` and error messages. */
export function functionNames(): string[] {
  return Object.keys(FUNCTIONS);
}

/** A function's parameter names, in order (unknown function: 400 naming the known ones). */
export function functionParams(name: string): string[] {
  return lookup(name).params.map((p) => p.name);
}

/** Whether a function only reads. */
export function isReadOnly(name: string): boolean {
  return lookup(name).readOnly;
}

function lookup(name: string): FunctionDef {
  const f = FUNCTIONS[name];
  if (!f) throw new Invalid(`unknown function '${name}'; known: ${functionNames().join(', ')}`);
  return f;
}

/** Checks and names a function's arguments: positional, or `--param=value`. */
export function bindArguments(name: string, args: string[]): Record<string, string | number> {
  const f = lookup(name);
  const out: Record<string, string | number> = {};
  const positional: string[] = [];
  for (const a of args) {
    const m = /^--([a-z-]+)=(.*)$/s.exec(a);
    if (m) {
      if (!f.params.some((p) => p.name === m[1]))
        throw new Invalid(`${name} has no parameter '${m[1]}'; it takes ${usage(f)}`);
      out[m[1]!] = m[2]!;
    } else positional.push(a);
  }
  for (const p of f.params) if (!(p.name in out) && positional.length) out[p.name] = positional.shift()!;
  if (positional.length)
    throw new Invalid(`${name} takes ${f.params.length} argument(s) (${usage(f)}), got ${args.length}`);
  for (const p of f.params) {
    const v = out[p.name];
    if (v === undefined || v === '') throw new Invalid(`${name} needs <${p.name}>: ${name} ${usage(f)}`);
    if (p.kind === 'int') {
      if (!/^\d{1,9}$/.test(String(v)))
        throw new Invalid(`${name}: <${p.name}> must be a non-negative integer, got '${v}'`);
      out[p.name] = Number(v);
    }
    if (p.kind === 'imageRef' && !/^(:[\w][\w.-]{0,127}|@sha256:[a-f0-9]{64})$/.test(String(v))) {
      throw new Invalid(`${name}: <${p.name}> must be ':<tag>' or '@sha256:<digest>', got '${v}'`);
    }
  }
  return out;
}

function usage(f: FunctionDef): string {
  return f.params.map((p) => `<${p.name}>`).join(' ') || '(no arguments)';
}

/** Runs a function on Kubernetes/YAML data; a mutating one returns the new text and the paths it wrote. */
export function runFunction(name: string, args: string[], data: string): FunctionResult {
  const f = lookup(name);
  const bound = bindArguments(name, args);
  const docs = parseYaml(data);
  const written: ResourcePath[] = [];
  const output = f.run(docs, bound, written);
  return { data: f.readOnly ? data : stringifyYaml(docs), written, output };
}
