import {
  BUILTIN_PREREQUISITES,
  failureAllowance,
  parseDuration,
  type GateResult,
  type Release,
  type Space,
  type WorkflowDefinition,
  type WorkflowStage,
} from '../model/entities.ts';
import { celReads, compileCel } from './cel.ts';
import {
  evaluateAttestationRequirement,
  explainAttestationRequirement,
  type AttestationFacts,
  type AttestedUnit,
} from './attestations.ts';

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
  /** The time the gates are evaluated at (Soak measures up to it). */
  now?: Date;
  /** Attach what each gate read and what would open it (an explanation). */
  explain?: boolean;
}

/** The ChangeOrder as the gates see it: its API JSON and the names its messages use. */
export interface GateChangeOrder {
  json: Record<string, unknown>;
  slug: string;
  /** `<base>/<slug>`: how a command names it. */
  ref: string;
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
  const r = result(
    'Taken',
    s,
    s.taken,
    s.taken ? `has taken change order '${co.slug}'` : `has not taken change order '${co.slug}'`,
  );
  return s.explain ? explainGate(r, co, s) : r;
}

/** One prerequisite over one Space: a pure function of the state read for it. */
export function evaluatePrerequisite(name: string, co: GateChangeOrder, s: SpaceGateState): GateResult {
  const r = evaluateOne(name, co, s);
  return s.explain ? explainGate(r, co, s) : r;
}

/** How many of a Space's newest published Releases a Released gate's explanation shows. */
export const GATE_RELEASES_SHOWN = 5;

const liveOf = (r: Release) => ({ ReleaseNum: r.ReleaseNum, Digest: r.Digest, LiveStatus: r.LiveStatus ?? {} });

/** What a gate read over a Space, and what would open it if it fails. Pure. */
export function explainGate(r: GateResult, co: GateChangeOrder, s: SpaceGateState): GateResult {
  const name = r.Prerequisite;
  const release = carryingRelease(s);
  let evidence: Record<string, unknown> = {};
  let opens: string | undefined;
  if (name === 'Taken') {
    evidence = { Taken: s.taken };
    opens = `promote change order '${co.slug}' into space '${s.space.Slug}': cub variant promote ${s.space.Slug} --change-order ${co.ref}`;
  } else if (name === BUILTIN_PREREQUISITES.Validated) {
    evidence = {
      Units: s.changed.map((u) => ({ Unit: u.slug, RevisionNum: u.revision, ValidationErrors: u.validationErrors })),
    };
    opens = `fix the validation errors in ${s.space.Slug} (a new revision the change carries); its Units: cub unit list --space ${s.space.Slug}`;
  } else if (name === BUILTIN_PREREQUISITES.Released) {
    evidence = {
      ReleaseTarget: s.space.ReleaseTargetID ?? null,
      Releases: s.published
        .slice(0, GATE_RELEASES_SHOWN)
        .map((x) => ({ ReleaseNum: x.ReleaseNum, Digest: x.Digest, CarriesChange: s.carries(x) })),
    };
    opens = `publish a release of the change there: cub release publish ${s.space.Slug} --revision ChangeOrder:${co.ref}`;
  } else if (name === BUILTIN_PREREQUISITES.Healthy || soakDuration(name) !== undefined) {
    const latest = s.published[0];
    evidence = {
      ReleaseTarget: s.space.ReleaseTargetID ?? null,
      Latest: latest ? { ...liveOf(latest), CarriesChange: s.carries(latest) } : null,
      ...(soakDuration(name) !== undefined && latest ? { History: (latest.LiveStatusHistory ?? []).slice(-10) } : {}),
    };
    const soak = soakDuration(name);
    opens =
      !latest || !s.carries(latest)
        ? `a release of the change there, then a Synced and Healthy report of it: cub release publish ${s.space.Slug} --revision ChangeOrder:${co.ref}`
        : soak !== undefined && isHealthy(latest.LiveStatus ?? {})
          ? `release ${latest.ReleaseNum} staying Synced and Healthy until ${new Date(Date.parse(healthySince(latest)) + soak).toISOString()}`
          : `a report of release ${latest.ReleaseNum} as Synced and Healthy (by Argo CD or Flux, or by hand): cub release report --space ${s.space.Slug} --release ${latest.ReleaseNum} --sync Synced --health Healthy`;
  } else if (co.workflow.CustomPrerequisites?.some((c) => c.Name === name)) {
    const custom = co.workflow.CustomPrerequisites.find((c) => c.Name === name)!;
    const vars: Record<string, unknown> = { Space: s.space, ChangeOrder: co.json, Release: release ?? null };
    const read = (path: string[]) =>
      path
        .slice(1)
        .reduce<unknown>(
          (v, k) => (v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined),
          vars[path[0]!],
        );
    let reads: string[][] = [];
    try {
      reads = celReads(custom.Expression);
    } catch {
      /* an expression that no longer parses reads nothing */
    }
    // An entity read whole (`Release != null`) is shown by what names it, not in full; a map read whole
    // (`'code-freeze' in Space.Annotations`) as it is, so the value shown is the value CEL read.
    const NAMING = ['Slug', 'ReleaseNum', 'Digest', 'State', 'Stage'];
    const compact = (v: unknown): unknown => {
      if (!v || typeof v !== 'object' || Array.isArray(v)) return v;
      const o = v as Record<string, unknown>;
      if (NAMING.some((k) => k in o)) return Object.fromEntries(NAMING.filter((k) => k in o).map((k) => [k, o[k]]));
      const entries = Object.entries(o);
      return Object.fromEntries(
        entries.length > 20 ? [...entries.slice(0, 20), ['…', `${entries.length - 20} more`]] : entries,
      );
    };
    evidence = {
      Expression: custom.Expression,
      Values: Object.fromEntries(
        reads.map((p) => [
          p
            .map((k, i) => (i === 0 || /^[A-Za-z_]\w*$/.test(k) ? k : `['${k}']`))
            .join('.')
            .replace(/\.\[/g, '['),
          compact(read(p)) ?? null,
        ]),
      ),
    };
    opens = `make ${custom.Expression.slice(4).trim()} true for space '${s.space.Slug}'${custom.Description ? ` (${custom.Description})` : ''}; what it reads of the Space: cub space get ${s.space.Slug} -o yaml`;
  } else if (co.workflow.AttestationPrerequisites?.some((a) => a.Name === name)) {
    const req = co.workflow.AttestationPrerequisites.find((a) => a.Name === name)!;
    const facts = s.attest ?? { now: new Date(0), space: s.space, attestations: [], users: [], groups: [] };
    evidence = explainAttestationRequirement(req, s.changed, facts);
    opens = `${req.Count ?? 1} ${req.Type ?? 'Approval'} attestation(s) per revision from eligible attesters who did not write the change: ${(req.Type ?? 'Approval') === 'Approval' ? `cub variant approve ${s.space.Slug} --change-order ${co.ref}` : `cub attestation create --space ${s.space.Slug} --type ${req.Type} --change-order ${co.ref}`}`;
  }
  return { ...r, Evidence: evidence, ...(r.Satisfied || !opens ? {} : { Opens: opens }) };
}

function evaluateOne(name: string, co: GateChangeOrder, s: SpaceGateState): GateResult {
  const hasTarget = !!s.space.ReleaseTargetID;
  const soak = soakDuration(name);
  if (soak !== undefined) return evaluateSoak(name, soak, co, s);
  switch (name) {
    case BUILTIN_PREREQUISITES.Validated: {
      const bad = s.changed.filter((u) => Object.keys(u.validationErrors).length);
      return result(
        name,
        s,
        !bad.length,
        bad.length
          ? `has validation errors: ${bad.map((u) => `${u.slug} revision ${u.revision} (${Object.values(u.validationErrors).join('; ')})`).join(', ')}`
          : 'no validation errors in what a release would bundle',
      );
    }
    case BUILTIN_PREREQUISITES.Released: {
      if (!hasTarget) return result(name, s, true, 'has no release target, so nothing to release');
      const r = carryingRelease(s);
      return result(
        name,
        s,
        !!r,
        r ? `released it in release ${r.ReleaseNum}` : `has taken change order '${co.slug}' but has not released it`,
      );
    }
    case BUILTIN_PREREQUISITES.Healthy: {
      if (!hasTarget)
        return result(name, s, false, 'has no release target: nothing is deployed from it, so it is never healthy');
      const latest = s.published[0];
      if (!latest || !s.carries(latest))
        return result(
          name,
          s,
          false,
          `has taken change order '${co.slug}' but its latest published release does not carry it`,
        );
      const l = latest.LiveStatus ?? {};
      if (!l.Sync && !l.Health)
        return result(name, s, false, `release ${latest.ReleaseNum} has not been reported on yet`);
      const healthy =
        l.Sync === 'Synced' && l.Health === 'Healthy' && l.Operation !== 'Running' && l.Operation !== 'Failed';
      return result(
        name,
        s,
        healthy,
        healthy
          ? `release ${latest.ReleaseNum} is Synced and Healthy`
          : `release ${latest.ReleaseNum} is ${l.Sync ?? 'Unknown'}, ${l.Health ?? 'Unknown'}${l.Operation ? `, operation ${l.Operation}` : ''}`,
      );
    }
  }
  const custom = co.workflow.CustomPrerequisites?.find((c) => c.Name === name);
  if (custom) {
    try {
      const v = compileCel(custom.Expression)({
        Space: s.space,
        ChangeOrder: co.json,
        Release: carryingRelease(s) ?? null,
      });
      return result(
        name,
        s,
        v === true,
        v === true
          ? (custom.Description ?? 'holds')
          : `requires ${name}${custom.Description ? ` (${custom.Description})` : ''}: the expression is ${JSON.stringify(typeof v === 'bigint' ? Number(v) : v)}`,
      );
    } catch (e) {
      return result(
        name,
        s,
        false,
        `requires ${name}: the expression cannot be evaluated here: ${(e as Error).message.split('\n')[0]}`,
      );
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

/** The duration a `Soak=30m` (or `Soak: 30m`) prerequisite asks for, in ms; undefined for another name, NaN for a bad duration. */
export function soakDuration(name: string): number | undefined {
  const m = /^Soak\s*[=:]\s*(\S+)$/.exec(name);
  if (!m) return undefined;
  return parseDuration(m[1]!) ?? Number.NaN;
}

const isHealthy = (t: { Sync?: string; Health?: string; Operation?: string }) =>
  t.Sync === 'Synced' && t.Health === 'Healthy' && t.Operation !== 'Running' && t.Operation !== 'Failed';

function formatDuration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.floor(s / 60)}m`;
  return `${Math.floor(s / 3600)}h${Math.floor((s % 3600) / 60) ? `${Math.floor((s % 3600) / 60)}m` : ''}`;
}

/** When a Release's latest unbroken healthy run began: its first healthy report, in ObservedAt order. */
function healthySince(release: Release): string {
  const history = [...(release.LiveStatusHistory ?? [])].sort(
    (a, b) => Date.parse(a.ObservedAt) - Date.parse(b.ObservedAt),
  );
  let since: string | undefined;
  for (let i = history.length - 1; i >= 0 && isHealthy(history[i]!); i--) since = history[i]!.ObservedAt;
  return since ?? release.LiveStatus?.ObservedAt ?? release.PublishedAt;
}

/**
 * Soak: the Release carrying the change has been Synced and Healthy, continuously, for at least `need`
 * ms at `s.now` — counted from the first healthy report of the latest unbroken healthy run in its live
 * status history, so a Degraded or Progressing report restarts the clock. Pure.
 */
export function evaluateSoak(name: string, need: number, co: GateChangeOrder, s: SpaceGateState): GateResult {
  const healthy = evaluatePrerequisite(BUILTIN_PREREQUISITES.Healthy, co, s);
  if (!healthy.Satisfied)
    return result(name, s, false, `${healthy.Message}; it must be Healthy for ${formatDuration(need)} first`);
  const release = s.published[0]!;
  const since = healthySince(release);
  const now = s.now ?? new Date();
  const held = now.getTime() - Date.parse(since);
  if (held >= need)
    return result(
      name,
      s,
      true,
      `release ${release.ReleaseNum} has been Synced and Healthy for ${formatDuration(held)} (since ${since}), at least ${formatDuration(need)}`,
    );
  return result(
    name,
    s,
    false,
    `release ${release.ReleaseNum} has been Synced and Healthy for ${formatDuration(held)} (since ${since}); Soak needs ${formatDuration(need)}: it opens at ${new Date(Date.parse(since) + need).toISOString()} if it stays Healthy`,
  );
}

/** Gates a Stage's failure budget may forgive: deploy outcomes, never approvals or policy. */
const isDeployGate = (g: GateResult) =>
  g.Prerequisite === 'Taken' ||
  g.Prerequisite === BUILTIN_PREREQUISITES.Released ||
  g.Prerequisite === BUILTIN_PREREQUISITES.Healthy ||
  g.Prerequisite.startsWith('Soak=');

/**
 * A Stage's failure budget and MinHealthyPercent applied to the gates evaluated over its Spaces: when the
 * Spaces failing only deploy gates (Taken, Released, Healthy, Soak) are within the budget and at least
 * MinHealthyPercent of the Spaces pass, those failures are forgiven — one dead cluster of 300 does not hold
 * a fleet; ten do. Pure.
 */
export function tolerate(results: GateResult[], stage: { spaces: Space[]; def?: WorkflowStage }): GateResult[] {
  const min = stage.def?.MinHealthyPercent;
  const allowance = failureAllowance(stage.def, stage.spaces.length);
  if (min === undefined && allowance === undefined) return results;
  const failing = new Set(results.filter((g) => !g.Satisfied && isDeployGate(g)).map((g) => g.SpaceID));
  if (!failing.size) return results;
  // A Space that also fails an approval or a policy is never forgiven.
  if (results.some((g) => !g.Satisfied && !isDeployGate(g))) return results;
  const total = stage.spaces.length;
  const passing = total - failing.size;
  if ((min !== undefined && passing * 100 < min * total) || (allowance !== undefined && failing.size > allowance))
    return results;
  const why = `tolerated: ${passing} of ${total} space(s) pass${min !== undefined ? ` (at least ${min}% needed)` : ''}${allowance !== undefined ? `, ${failing.size} within the failure budget of ${allowance}` : ''}`;
  return results.map((g) =>
    !g.Satisfied && isDeployGate(g) ? { ...g, Satisfied: true, Message: `${g.Message} (${why})` } : g,
  );
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
      if (g.Prerequisite === 'Hold' || g.Prerequisite === 'Window')
        return `unable to promote to stage '${stage}': ${g.Message}`;
      const space = spaces.get(g.SpaceID);
      const name = space ? variantName(space) : g.SpaceSlug;
      return `unable to promote to stage '${stage}', Variant '${name}'${g.Message.startsWith('requires') ? ': ' : ' '}${g.Message}`;
    })
    .join('; ');
}
