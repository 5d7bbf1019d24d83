/**
 * The Links that carry values from a Unit outside the component, resolved. Pure: data in, data and
 * the paths written out.
 * - TransformPaths: read named single values from a resource of the upstream Unit (registrybot's
 *   `streams.stable.tag`) and set them downstream through functions whose arguments are templates
 *   over those values (`:{{.Params.tag}}`).
 * - Insert: the same, but a value is inserted as a string whatever it holds: a map or list (or, with no
 *   Path, the whole upstream resource) is written as its YAML text, for a ConfigMap key, say.
 * - Upsert: the upstream resources the UpstreamPaths name (every one, when none is named) are carried
 *   into the downstream Unit, replacing the resource of the same type and name or added after the
 *   others; DownstreamSetters, if any, transform the carried copy first, with the values the Paths read.
 */
import { stringify, type Document } from 'yaml';
import type { Link } from '../model/entities.ts';
import { Invalid } from '../model/errors.ts';
import { parseYaml, resourceKey, stringifyYaml } from './documents.ts';
import { runFunction, type ResourcePath } from './functions.ts';
import { render } from './invocations.ts';

type LinkSpec = Pick<Link, 'UpstreamPaths' | 'DownstreamSetters' | 'Slug' | 'UpdateType'>;

/** A resource's type and name as a Link names them: Kubernetes `apiVersion/kind` and `metadata.name`, or ConfigHub's `configHub.configSchema` and `configName`. */
function identity(js: Record<string, unknown>): { type?: string; name?: string } {
  const ch = js.configHub as { configSchema?: string; configName?: string } | undefined;
  if (ch?.configSchema) return { type: ch.configSchema, name: ch.configName };
  const meta = js.metadata as { name?: string } | undefined;
  return {
    type: js.apiVersion && js.kind ? `${String(js.apiVersion)}/${String(js.kind)}` : undefined,
    name: meta?.name,
  };
}

const sameIdentity = (a: Record<string, unknown>, b: Record<string, unknown>) => {
  const x = identity(a);
  const y = identity(b);
  return x.type !== undefined && x.type === y.type && x.name === y.name;
};

/** The value at a dotted path (`streams.stable.tag`; a number segment indexes a list). */
function valueAt(js: unknown, path: string): unknown {
  let at: unknown = js;
  for (const seg of path.split('.')) {
    if (at === null || typeof at !== 'object') return undefined;
    at = Array.isArray(at) && /^\d+$/.test(seg) ? at[Number(seg)] : (at as Record<string, unknown>)[seg];
  }
  return at;
}

type Entry = NonNullable<Link['UpstreamPaths']>[number];

/** The upstream resource an UpstreamPaths entry reads: the one it names, or the first. */
function resourceOf(link: LinkSpec, docs: Record<string, unknown>[], p: Entry): Record<string, unknown> {
  const doc = p.Resource
    ? docs.find((d) => identity(d).type === p.Resource!.ResourceType && identity(d).name === p.Resource!.ResourceName)
    : docs[0];
  if (!doc)
    throw new Invalid(
      `link '${link.Slug}': the upstream has no resource ${p.Resource ? `${p.Resource.ResourceType} ${p.Resource.ResourceName}` : ''}`.trim(),
    );
  return doc;
}

/**
 * The values a Link's UpstreamPaths read from the upstream data, by Name: single values for
 * TransformPaths and Upsert; for Insert, any value (or the whole resource, with no Path) as a string.
 */
export function upstreamValues(link: LinkSpec, upstream: string): Record<string, string> {
  const docs = parseYaml(upstream).map((d) => d.toJS() as Record<string, unknown>);
  const insert = link.UpdateType === 'Insert';
  const out: Record<string, string> = {};
  for (const p of link.UpstreamPaths ?? []) {
    if (!p.Path && !insert) continue;
    const doc = resourceOf(link, docs, p);
    const v = p.Path ? valueAt(doc, p.Path) : doc;
    if (v === undefined || v === null) throw new Invalid(`link '${link.Slug}': ${p.Path} in the upstream is missing`);
    if (typeof v === 'object') {
      if (!insert)
        throw new Invalid(
          `link '${link.Slug}': ${p.Path} in the upstream is not a single value (an Insert link inserts a whole map or list as text)`,
        );
      out[p.Name] = stringify(v, { lineWidth: 0 });
    } else out[p.Name] = String(v);
  }
  return out;
}

/** Runs DownstreamSetters over data with the upstream's values. */
function runSetters(link: LinkSpec, values: Record<string, string>, data: string, written: ResourcePath[]): string {
  for (const s of link.DownstreamSetters ?? []) {
    const args = render(
      s.FunctionInvocation.Arguments.map((a) => ({
        ParameterName: a.ParameterName,
        Value: a.Value,
        ...(a.Evaluator === 'template' ? { Evaluator: 'template' as const } : {}),
      })),
      values,
    );
    const r = runFunction(s.FunctionInvocation.FunctionName, args, data);
    data = r.data;
    written.push(...r.written);
  }
  return data;
}

/** Upsert: the upstream resources the Link carries, transformed by its setters, put in place of their namesakes downstream or after the rest. */
function upsert(
  link: LinkSpec,
  upstream: string,
  downstream: string,
  values: Record<string, string>,
): { data: string; written: ResourcePath[] } {
  const upDocs = parseYaml(upstream);
  const named = (link.UpstreamPaths ?? []).filter((p) => p.Resource);
  const js = upDocs.map((d) => d.toJS() as Record<string, unknown>);
  for (const p of named) resourceOf(link, js, p);
  const chosen = named.length
    ? upDocs.filter((_d, i) =>
        named.some(
          (p) =>
            identity(js[i]!).type === p.Resource!.ResourceType && identity(js[i]!).name === p.Resource!.ResourceName,
        ),
      )
    : upDocs;
  if (!chosen.length) throw new Invalid(`link '${link.Slug}': the upstream holds no resource to upsert`);
  const unused: ResourcePath[] = [];
  const carried = parseYaml(runSetters(link, values, stringifyYaml(chosen), unused));
  const down: Document[] = downstream.trim() ? parseYaml(downstream) : [];
  const written: ResourcePath[] = [];
  for (const doc of carried) {
    const c = doc.toJS() as Record<string, unknown>;
    if (identity(c).type === undefined)
      throw new Invalid(
        `link '${link.Slug}': an upstream resource has no type (apiVersion and kind, or configHub.configSchema) to upsert it by`,
      );
    const at = down.findIndex((d) => sameIdentity(d.toJS() as Record<string, unknown>, c));
    if (at >= 0) down[at] = doc;
    else down.push(doc);
    written.push({ Resource: resourceKey(c), Path: '' });
  }
  return { data: stringifyYaml(down), written };
}

/** Resolves one Link of the carrying types against the upstream data: the new downstream data, the paths written, the values read. */
export function applyTransform(
  link: LinkSpec,
  upstream: string,
  downstream: string,
): { data: string; written: ResourcePath[]; values: Record<string, string> } {
  const values = upstreamValues(link, upstream);
  if (link.UpdateType === 'Upsert') return { ...upsert(link, upstream, downstream, values), values };
  const written: ResourcePath[] = [];
  const data = runSetters(link, values, downstream, written);
  return { data, written, values };
}
