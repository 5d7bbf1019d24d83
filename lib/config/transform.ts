/**
 * TransformPaths Links, resolved: read named values from a resource of the upstream Unit (say,
 * registrybot's `streams.stable.tag`) and set them downstream through functions whose arguments are
 * templates over those values (`:{{.Params.tag}}`). Pure: data in, data and the paths written out.
 */
import type { Link } from '../model/entities.ts';
import { Invalid } from '../model/errors.ts';
import { parseYaml } from './documents.ts';
import { runFunction, type ResourcePath } from './functions.ts';
import { render } from './invocations.ts';

/** A resource's type and name as a Link names them: Kubernetes `apiVersion/kind` and `metadata.name`, or ConfigHub's `configHub.configSchema` and `configName`. */
function identity(js: Record<string, unknown>): { type?: string; name?: string } {
  const ch = js.configHub as { configSchema?: string; configName?: string } | undefined;
  if (ch?.configSchema) return { type: ch.configSchema, name: ch.configName };
  const meta = js.metadata as { name?: string } | undefined;
  return { type: js.apiVersion && js.kind ? `${String(js.apiVersion)}/${String(js.kind)}` : undefined, name: meta?.name };
}

/** The value at a dotted path (`streams.stable.tag`; a number segment indexes a list). */
function valueAt(js: unknown, path: string): unknown {
  let at: unknown = js;
  for (const seg of path.split('.')) {
    if (at === null || typeof at !== 'object') return undefined;
    at = Array.isArray(at) && /^\d+$/.test(seg) ? at[Number(seg)] : (at as Record<string, unknown>)[seg];
  }
  return at;
}

/** The values a Link's UpstreamPaths read from the upstream data, by Name. */
export function upstreamValues(link: Pick<Link, 'UpstreamPaths' | 'Slug'>, upstream: string): Record<string, string> {
  const docs = parseYaml(upstream).map((d) => d.toJS() as Record<string, unknown>);
  const out: Record<string, string> = {};
  for (const p of link.UpstreamPaths ?? []) {
    const doc = p.Resource ? docs.find((d) => identity(d).type === p.Resource!.ResourceType && identity(d).name === p.Resource!.ResourceName) : docs[0];
    if (!doc) throw new Invalid(`link '${link.Slug}': the upstream has no resource ${p.Resource ? `${p.Resource.ResourceType} ${p.Resource.ResourceName}` : ''}`.trim());
    const v = valueAt(doc, p.Path);
    if (v === undefined || v === null || typeof v === 'object') throw new Invalid(`link '${link.Slug}': ${p.Path} in the upstream is ${v === undefined || v === null ? 'missing' : 'not a single value'}`);
    out[p.Name] = String(v);
  }
  return out;
}

/** Runs the Link's DownstreamSetters over the downstream data with the upstream's values. */
export function applyTransform(link: Pick<Link, 'UpstreamPaths' | 'DownstreamSetters' | 'Slug'>, upstream: string, downstream: string): { data: string; written: ResourcePath[]; values: Record<string, string> } {
  const values = upstreamValues(link, upstream);
  let data = downstream;
  const written: ResourcePath[] = [];
  for (const s of link.DownstreamSetters ?? []) {
    const args = render(
      s.FunctionInvocation.Arguments.map((a) => ({ ParameterName: a.ParameterName, Value: a.Value, ...(a.Evaluator === 'template' ? { Evaluator: 'template' as const } : {}) })),
      values,
    );
    const r = runFunction(s.FunctionInvocation.FunctionName, args, data);
    data = r.data;
    written.push(...r.written);
  }
  return { data, written, values };
}
