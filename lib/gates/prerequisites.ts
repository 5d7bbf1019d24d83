import { BUILTIN_PREREQUISITES, type GateResult, type Release, type Space, type WorkflowDefinition } from '../model/entities.ts';
import { compileCel } from './cel.ts';
import { evaluateAttestationRequirement, type AttestationFacts, type AttestedUnit } from './attestations.ts';

/** What the gates read about one Space, gathered by the caller at evaluation time (never cached). */
export interface SpaceGateState {
  space: Space;
  /** The Space took the change (every Unit of it carries the ChangeOrder's end mark). */
  taken: boolean;
  /** Published Releases of the Space, newest first. */
  published: Release[];
  /** Which of them carry the change (for the ChangeOrder, or bundling each changed Unit at or past its end mark). */
  carries: (r: Release) => boolean;
  /** The Units the change changed there, at the revision a Release of the change would bundle. */
  changed: (AttestedUnit & { validationErrors: Record<string, string> })[];
  /** Who attested what there, and who may: read only when an attestation prerequisite is evaluated. */
  attest?: AttestationFacts;
}

/** The ChangeOrder as the gates see it: its API JSON and the names its messages use. */
export interface GateChangeOrder {
  json: Record<string, unknown>;
  slug: string;
  workflow: WorkflowDefinition;
}

/** How a Space is named in refusals: its Variant label, as users know it, else its slug. */
export function variantName(space: Space): string {
  return space.Labels.Variant ?? space.Slug;
}

function result(name: string, s: SpaceGateState, ok: boolean, message: string): GateResult {
  return { Prerequisite: name, Satisfied: ok, SpaceID: s.space.SpaceID, SpaceSlug: s.space.Slug, Message: message };
}

/** The Release of the Space carrying the change that gates read: the newest published one. */
export function carryingRelease(s: SpaceGateState): Release | undefined {
  return s.published.find((r) => s.carries(r));
}

/** Has the Space taken the change: checked before any declared prerequisite. */
export function takenGate(co: GateChangeOrder, s: SpaceGateState): GateResult {
  return result('Taken', s, s.taken, s.taken ? `has taken change order '${co.slug}'` : `has not taken change order '${co.slug}'`);
}

/** One prerequisite over one Space: a pure function of the state read for it. */
export function evaluatePrerequisite(name: string, co: GateChangeOrder, s: SpaceGateState): GateResult {
  const hasTarget = !!s.space.ReleaseTargetID;
  switch (name) {
    case BUILTIN_PREREQUISITES.Validated: {
      const bad = s.changed.filter((u) => Object.keys(u.validationErrors).length);
      return result(name, s, !bad.length, bad.length ? `has validation errors: ${bad.map((u) => `${u.slug} revision ${u.revision} (${Object.values(u.validationErrors).join('; ')})`).join(', ')}` : 'no validation errors in what a release would bundle');
    }
    case BUILTIN_PREREQUISITES.Released: {
      if (!hasTarget) return result(name, s, true, 'has no release target, so nothing to release');
      const r = carryingRelease(s);
      return result(name, s, !!r, r ? `released it in release ${r.ReleaseNum}` : `has taken change order '${co.slug}' but has not released it`);
    }
    case BUILTIN_PREREQUISITES.Healthy: {
      if (!hasTarget) return result(name, s, false, 'has no release target: nothing is deployed from it, so it is never healthy');
      const latest = s.published[0];
      if (!latest || !s.carries(latest)) return result(name, s, false, `has taken change order '${co.slug}' but its latest published release does not carry it`);
      const l = latest.LiveStatus ?? {};
      if (!l.Sync && !l.Health) return result(name, s, false, `release ${latest.ReleaseNum} has not been reported on yet`);
      const healthy = l.Sync === 'Synced' && l.Health === 'Healthy' && l.Operation !== 'Running' && l.Operation !== 'Failed';
      return result(name, s, healthy, healthy ? `release ${latest.ReleaseNum} is Synced and Healthy` : `release ${latest.ReleaseNum} is ${l.Sync ?? 'Unknown'}, ${l.Health ?? 'Unknown'}${l.Operation ? `, operation ${l.Operation}` : ''}`);
    }
  }
  const custom = co.workflow.CustomPrerequisites?.find((c) => c.Name === name);
  if (custom) {
    try {
      const v = compileCel(custom.Expression)({ Space: s.space, ChangeOrder: co.json, Release: carryingRelease(s) ?? null });
      return result(name, s, v === true, v === true ? (custom.Description ?? 'holds') : `requires ${name}${custom.Description ? ` (${custom.Description})` : ''}: the expression is ${JSON.stringify(typeof v === 'bigint' ? Number(v) : v)}`);
    } catch (e) {
      return result(name, s, false, `requires ${name}: the expression cannot be evaluated here: ${(e as Error).message.split('\n')[0]}`);
    }
  }
  const attestation = co.workflow.AttestationPrerequisites?.find((a) => a.Name === name);
  if (attestation) {
    const facts = s.attest ?? { now: new Date(0), space: s.space, attestations: [], users: [], groups: [] };
    const r = evaluateAttestationRequirement(attestation, s.changed, facts);
    return result(name, s, r.ok, r.message);
  }
  return result(name, s, false, `prerequisite '${name}' is not declared by the workflow`);
}

/** A Stage's entry gates over the Spaces of the Stage before: taken first, then each prerequisite. */
export function evaluateGates(prerequisites: string[], co: GateChangeOrder, states: SpaceGateState[]): GateResult[] {
  const out: GateResult[] = [];
  for (const s of states) {
    const taken = takenGate(co, s);
    out.push(taken);
    if (!taken.Satisfied) continue;
    for (const p of prerequisites) out.push(evaluatePrerequisite(p, co, s));
  }
  return out;
}

/** Refusal lines as the spec writes them. */
export function refusal(stage: string, failed: GateResult[], spaces: Map<string, Space>): string {
  return failed
    .map((g) => {
      if (g.Prerequisite === 'Hold') return `unable to promote to stage '${stage}': ${g.Message}`;
      const space = spaces.get(g.SpaceID);
      const name = space ? variantName(space) : g.SpaceSlug;
      return `unable to promote to stage '${stage}', Variant '${name}'${g.Message.startsWith('requires') ? ': ' : ' '}${g.Message}`;
    })
    .join('; ');
}
