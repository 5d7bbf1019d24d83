import type { WorkflowDefinition } from '../lib/model/entities.ts';

type Doc = Record<string, unknown>;

const up = (k: string) => k.charAt(0).toUpperCase() + k.slice(1);

/** Field names as the document form writes them (camelCase) → the API's (PascalCase), recursively. */
function pascal(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(pascal);
  if (v && typeof v === 'object')
    return Object.fromEntries(Object.entries(v as Doc).map(([k, x]) => [up(k), pascal(x)]));
  return v;
}

/**
 * A workflow as a file gives it: the API's fields (what `get -o json` prints), or the document form
 * `apiVersion: …/v1, kind: ChangeWorkflow, metadata: {name}, spec: {stages, final, …}`.
 */
export function workflowFromFile(doc: Doc): { slug?: string; definition: Doc } {
  if (doc.kind === 'ChangeWorkflow' && doc.spec && typeof doc.spec === 'object') {
    const meta = (doc.metadata ?? {}) as Doc;
    return { slug: typeof meta.name === 'string' ? meta.name : undefined, definition: pascal(doc.spec) as Doc };
  }
  const { Stages, Final, CustomPrerequisites, AttestationPrerequisites } = doc;
  const definition: Doc = { Stages };
  if (Final !== undefined) definition.Final = Final;
  if (CustomPrerequisites !== undefined) definition.CustomPrerequisites = CustomPrerequisites;
  if (AttestationPrerequisites !== undefined) definition.AttestationPrerequisites = AttestationPrerequisites;
  return { slug: typeof doc.Slug === 'string' ? doc.Slug : undefined, definition };
}

/** The flag form: each --stage selects `Labels.Stage = '<name>'`; prerequisites gate every Stage after the first, and Final. */
export function workflowFromFlags(stages: string[], prerequisites: string[]): WorkflowDefinition {
  return {
    Stages: stages.map((name, i) => ({
      Name: name,
      WhereSpace: `Labels.Stage = '${name.replace(/'/g, "''")}'`,
      ...(i > 0 && prerequisites.length ? { Prerequisites: prerequisites } : {}),
    })),
    ...(prerequisites.length ? { Final: { Prerequisites: prerequisites } } : {}),
  };
}
