/**
 * Attestations: immutable records that a user approved (or rejected, or attested something else about)
 * specific revisions in one Space. `cub variant approve` picks the revisions (what a ChangeOrder brought
 * to each Space, or each Unit's head or named revision), `cub attestation create` records other types,
 * and revoking records a revocation beside the original. Requirements read them at the next promotion
 * or publish (lib/gates/attestations.ts); recording one also re-evaluates the ChangeOrders of its Space
 * on the bus.
 */
import {
  DESCRIBING_TOOLCHAIN,
  parseDuration,
  requireVerb,
  type Attestation,
  type AttestedRevision,
  type Caller,
  type ChangeOrder,
  type Space,
} from '../model/entities.ts';
import { BatonError, Invalid, NotFound } from '../model/errors.ts';
import { eventOps } from '../events/outbox.ts';
import { bounded } from '../util/concurrency.ts';
import { matches, parseWhere } from '../where/index.ts';
import { bySlug, findInSpace, findSpace } from '../variants/lookup.ts';
import { revisionNumsEach } from '../variants/revision-refs.ts';
import { marksOf } from './marks.ts';
import type { ChangeDeps } from './ports.ts';
import { authorsOf, orgSpaces, stagesOver } from './stages.ts';
import { runsAsJob, startJob, type JobHandler } from './jobs.ts';
import type { JobRecord } from '../ports/jobs.ts';
import {
  attestation,
  attestationEvents,
  record,
  type ApproveInput,
  type ApproveResult,
  type ApproveSpaceResult,
} from './attestations.ts';

const CONCURRENCY = 8;

/** The Spaces named, selected, or (with a ChangeOrder) in its Stage or that took it. */
async function targetSpaces(
  deps: ChangeDeps,
  caller: Caller,
  o: ApproveInput,
  co: ChangeOrder | undefined,
): Promise<Space[]> {
  const out = new Map<string, Space>();
  for (const ref of o.Spaces ?? []) {
    const s = await findSpace(deps, caller, ref);
    out.set(s.SpaceID, s);
  }
  if (o.WhereSpace !== undefined) {
    const q = parseWhere(o.WhereSpace, 'Space');
    for (const s of await orgSpaces(deps, caller, [q])) if (matches(q, s)) out.set(s.SpaceID, s);
  }
  if (co && o.Stage !== undefined) {
    const stage = stagesOver(co, await orgSpaces(deps, caller, [])).find((s) => s.name === o.Stage);
    if (!stage)
      throw new Invalid(
        `the workflow of change order '${co.Slug}' has no stage '${o.Stage}'${co.ChangeWorkflow ? `; stages: ${co.ChangeWorkflow.Stages.map((s) => s.Name).join(', ')}` : ''}`,
      );
    for (const s of stage.spaces) out.set(s.SpaceID, s);
  } else if (o.Stage !== undefined) {
    throw new Invalid('--stage names a Stage of a ChangeOrder: give --change-order too');
  }
  if (co && !out.size) {
    const took = new Set((await deps.store.progressOf(co.ChangeOrderID)).map((p) => p.SpaceID));
    for (const s of await orgSpaces(deps, caller, [])) if (took.has(s.SpaceID)) out.set(s.SpaceID, s);
  }
  if (!out.size && o.WhereSpace !== undefined && !o.Spaces?.length)
    throw new NotFound(`--where-space "${o.WhereSpace}" matches no Space you can see: nothing to approve`);
  if (!out.size && !co)
    throw new Invalid('name the Spaces to approve: <space>…, --where-space, or --change-order (with --stage)');
  return [...out.values()].sort(bySlug);
}

/** A `--revision` ref that names nothing in a Space: no Unit there can be attested by it. */
class RefNamesNothing extends Error {
  constructor(override readonly cause: BatonError) {
    super(cause.message);
  }
}

/** The revision of each Unit an attestation speaks for in a Space, or why a Unit is skipped. */
async function revisionsIn(
  deps: ChangeDeps,
  caller: Caller,
  space: Space,
  o: ApproveInput,
  co: ChangeOrder | undefined,
  marks: Awaited<ReturnType<typeof marksOf>> | undefined,
): Promise<ApproveSpaceResult['Units']> {
  let units = (await deps.store.listUnits(space.SpaceID)).sort(bySlug);
  if (o.Where !== undefined) {
    const q = parseWhere(o.Where, 'Unit');
    units = units.filter((u) => matches(q, { ...u, SpaceSlug: space.Slug }));
  }
  if (co && marks) {
    return units.flatMap((u): ApproveSpaceResult['Units'] => {
      const end = marks.end.get(u.UnitID);
      if (!end) return [{ UnitID: u.UnitID, UnitSlug: u.Slug, Skipped: `has not taken change order '${co.Slug}'` }];
      // Units the change left as they were carry nothing to approve.
      if (marks.start.get(u.UnitID)?.RevisionNum === end.RevisionNum) return [];
      return [
        {
          UnitID: u.UnitID,
          UnitSlug: u.Slug,
          RevisionNum: marks.publish.get(u.UnitID)?.RevisionNum ?? end.RevisionNum,
        },
      ];
    });
  }
  // What a Release of the Space would publish, unless --all.
  const released = o.All
    ? units
    : units.filter((u) => u.ToolchainType !== DESCRIBING_TOOLCHAIN && (u.TargetID || space.ReleaseTargetID));
  // The revision named, for every Unit at once (a Tag or ChangeOrder found once, its marks read by key in one batch): a Unit it names none of is skipped, saying why.
  let nums: (number | BatonError)[] = [];
  try {
    if (released.length) nums = await revisionNumsEach(deps, caller, space, released, o.Revision ?? 'HeadRevisionNum');
  } catch (e) {
    if (!(e instanceof BatonError)) throw e;
    // The ref names nothing here (no such Tag, ChangeSet, ChangeOrder or Space): the Space is skipped for it, and the whole approval refused when it attests nowhere.
    throw new RefNamesNothing(e);
  }
  return released.map((u, i) => {
    const n = nums[i]!;
    return n instanceof BatonError
      ? { UnitID: u.UnitID, UnitSlug: u.Slug, Skipped: n.message }
      : { UnitID: u.UnitID, UnitSlug: u.Slug, RevisionNum: n };
  });
}

/** What an approval settles before it looks at any Space: the type, the verdict, its expiry, the ChangeOrder. */
interface ApprovePlan {
  Input: ApproveInput;
  Type: string;
  Result: 'Pass' | 'Fail';
  ExpiresAt?: string;
  ChangeOrder?: { SpaceID: string; ChangeOrderID: string };
}

/** The attestation (or, on a dry run, what it would be) of one Space, or why it is skipped. */
async function approveSpace(
  deps: ChangeDeps,
  caller: Caller,
  plan: ApprovePlan,
  space: Space,
  co: ChangeOrder | undefined,
  marks: Awaited<ReturnType<typeof marksOf>> | undefined,
): Promise<{ entry: ApproveSpaceResult; revisions?: AttestedRevision[]; refError?: BatonError }> {
  const o = plan.Input;
  let units: ApproveSpaceResult['Units'];
  try {
    units = await revisionsIn(deps, caller, space, o, co, marks);
  } catch (e) {
    if (!(e instanceof RefNamesNothing)) throw e;
    return {
      entry: { SpaceID: space.SpaceID, SpaceSlug: space.Slug, Action: 'Skipped', Reason: e.cause.message, Units: [] },
      refError: e.cause,
    };
  }
  const picked = units.filter((u) => u.RevisionNum !== undefined);
  if (!picked.length) {
    return {
      entry: {
        SpaceID: space.SpaceID,
        SpaceSlug: space.Slug,
        Action: 'Skipped',
        Reason: co
          ? `no Unit there carries change order '${co.Slug}'`
          : o.All
            ? 'no Unit matches'
            : 'no Unit a Release would publish (a Space without a release Target needs --all)',
        Units: units,
      },
    };
  }
  const found = await deps.store.revisionsAt(picked.map((u) => ({ UnitID: u.UnitID, RevisionNum: u.RevisionNum! })));
  const hash = new Map(found.map((r) => [`${r.UnitID}#${r.RevisionNum}`, r.DataHash]));
  const revisions: AttestedRevision[] = picked.map((u) => {
    const h = hash.get(`${u.UnitID}#${u.RevisionNum}`);
    if (!h) throw new NotFound(`unit '${u.UnitSlug}' has no revision ${u.RevisionNum}`);
    return { UnitID: u.UnitID, RevisionNum: u.RevisionNum!, DataHash: h };
  });
  const warning = co && marks ? await ownChangeWarning(deps, caller, plan, co, marks, picked) : undefined;
  return {
    entry: {
      SpaceID: space.SpaceID,
      SpaceSlug: space.Slug,
      Action: 'Attest',
      ...(warning ? { Warning: warning } : {}),
      Units: units,
    },
    revisions,
  };
}

/**
 * Whether the caller's attestation of a ChangeOrder's revisions will not count toward its workflow's
 * requirements of that type, because the caller wrote (or promoted) a revision of the change there: said
 * at once, naming the requirements, rather than found out from `explain` later.
 */
async function ownChangeWarning(
  deps: ChangeDeps,
  caller: Caller,
  plan: ApprovePlan,
  co: ChangeOrder,
  marks: Awaited<ReturnType<typeof marksOf>>,
  picked: ApproveSpaceResult['Units'],
): Promise<string | undefined> {
  const reqs = (co.ChangeWorkflow?.AttestationPrerequisites ?? []).filter(
    (r) => (r.Type ?? 'Approval') === plan.Type && !r.AllowAuthors,
  );
  if (!reqs.length || !caller.UserID) return undefined;
  const mine: string[] = [];
  for (const u of picked) {
    const authors = await authorsOf(deps, u.UnitID, marks.start.get(u.UnitID)?.RevisionNum ?? 0, u.RevisionNum!);
    if (authors.includes(caller.UserID)) mine.push(`${u.UnitSlug} r${u.RevisionNum}`);
  }
  if (!mine.length) return undefined;
  return `recorded, but it does not count toward ${reqs.map((r) => r.Name).join(', ')}: you wrote (or promoted) the change here (${mine.join(', ')}), and the authors of a change do not count (AllowAuthors is off)`;
}

/** The attestations of Spaces looked at (made in their order, so ids are given out in it). */
function attest(
  deps: ChangeDeps,
  caller: Caller,
  plan: ApprovePlan,
  co: { ChangeOrderID: string } | undefined,
  spaces: Space[],
  looked: { entry: ApproveSpaceResult; revisions?: AttestedRevision[] }[],
): { entry: ApproveSpaceResult; attestation?: Attestation }[] {
  return looked.map((l, i) => {
    if (!l.revisions) return { entry: l.entry };
    const a = attestation(deps, caller, spaces[i]!, {
      Type: plan.Type,
      Result: plan.Result,
      Note: plan.Input.Note,
      Claims: plan.Input.Claims ?? {},
      ChangeOrderID: co?.ChangeOrderID,
      ExpiresAt: plan.ExpiresAt,
      Revisions: l.revisions,
    });
    return { entry: { ...l.entry, ...(plan.Input.DryRun ? {} : { AttestationID: a.AttestationID }) }, attestation: a };
  });
}

/**
 * `cub variant approve` / `POST /attest`: one Attestation per Space over the revisions selected. Needs
 * Approve in each. Over more Spaces than a request should take (or when asked), it runs as a job.
 */
export async function approve(
  deps: ChangeDeps,
  caller: Caller,
  o: ApproveInput & { Async?: boolean },
): Promise<ApproveResult | { job: JobRecord }> {
  const { Async: asked, ...input } = o;
  const type = input.Type ?? 'Approval';
  const result: 'Pass' | 'Fail' = input.Reject ? 'Fail' : 'Pass';
  const expires = input.ExpiresIn !== undefined ? parseDuration(input.ExpiresIn) : undefined;
  if (input.ExpiresIn !== undefined && !expires)
    throw new Invalid(`ExpiresIn '${input.ExpiresIn}' must be a duration such as 72h, 30d or 15m`);
  const co = input.ChangeOrderID
    ? (await findInSpace<ChangeOrder>(deps, caller, undefined, 'ChangeOrder', input.ChangeOrderID)).item
    : undefined;
  if (co && input.Revision !== undefined)
    throw new Invalid(
      '--revision and --change-order both pick revisions: give one (the change order approves what it brought to each Space)',
    );
  const spaces = await targetSpaces(deps, caller, input, co);
  if (!input.DryRun) requireVerb(caller, spaces, 'Approve', `${input.Reject ? 'reject' : 'approve'} there`);
  const now = deps.now();
  const plan: ApprovePlan = {
    Input: input,
    Type: type,
    Result: result,
    ExpiresAt: expires ? new Date(now.getTime() + expires).toISOString() : undefined,
    ChangeOrder: co ? { SpaceID: co.SpaceID, ChangeOrderID: co.ChangeOrderID } : undefined,
  };
  if (!input.DryRun && runsAsJob(deps, spaces.length, asked)) {
    return {
      job: await startJob(deps, caller, {
        jobId: deps.newId(),
        kind: 'Approve',
        waves: [spaces],
        plan,
        subject: {
          Type: type,
          Result: result,
          ...(co ? { ChangeOrderID: co.ChangeOrderID, ChangeOrderSlug: co.Slug } : {}),
        },
      }),
    };
  }
  const marks = co ? await marksOf(deps, co) : undefined;
  const out: ApproveResult = { DryRun: !!input.DryRun, Type: type, Result: result, Spaces: [], Attestations: [] };
  const looked = await bounded(spaces, CONCURRENCY, (space) => approveSpace(deps, caller, plan, space, co, marks));
  // A ref that names nothing where it was looked for, and so attests nothing anywhere, is the caller's mistake, not a skip in each.
  const refError = looked.find((l) => l.refError)?.refError;
  if (refError && !looked.some((l) => l.revisions)) throw refError;
  const done = attest(deps, caller, plan, co, spaces, looked);
  out.Spaces = done.map((d) => d.entry);
  const writes = done.flatMap((d) => (d.attestation ? [d.attestation] : []));
  if (!input.DryRun) {
    await record(deps, caller, writes, spaces);
    out.Attestations = writes;
  }
  return out;
}

/** What one Space of an approval job came to. */
type ApprovedSpace = { entry: ApproveSpaceResult; attestation?: Attestation };

/** An approval as a job: each part writes its Spaces' attestations with the part itself, in one transaction. */
export const approveJob: JobHandler<ApprovePlan, ApprovedSpace> = {
  async run(deps, job, plan, _wave, spaces) {
    const caller = job.Caller as Caller;
    const co = plan.ChangeOrder
      ? await deps.store.getInSpace<ChangeOrder>(
          'ChangeOrder',
          plan.ChangeOrder.SpaceID,
          plan.ChangeOrder.ChangeOrderID,
        )
      : undefined;
    if (plan.ChangeOrder && !co) throw new NotFound('the change order was deleted while it was being approved');
    const marks = co ? await marksOf(deps, co) : undefined;
    const looked = await bounded(spaces, CONCURRENCY, async (space) => {
      try {
        return await approveSpace(deps, caller, plan, space, co, marks);
      } catch (e) {
        if (!(e instanceof BatonError)) throw e;
        return {
          entry: {
            SpaceID: space.SpaceID,
            SpaceSlug: space.Slug,
            Action: 'Skipped' as const,
            Reason: e.message,
            Units: [],
          },
        };
      }
    });
    const results = attest(deps, caller, plan, co, spaces, looked);
    const writes = results.flatMap((r) => (r.attestation ? [r.attestation] : []));
    return {
      results,
      ops: [
        ...writes.map((item) => ({ op: 'create' as const, kind: 'Attestation' as const, item })),
        ...eventOps(deps, attestationEvents(caller, writes, spaces)),
      ],
    };
  },
  gaveUp: (spaces, error) =>
    spaces.map((s) => ({
      entry: {
        SpaceID: s.SpaceID,
        SpaceSlug: s.Slug,
        Action: 'Skipped',
        Reason: `the job's worker gave up on it after every attempt (${error}); nothing was recorded there: approve again`,
        Units: [],
      },
    })),
  summary: (r) => ({
    SpaceID: r.entry.SpaceID,
    Action: r.entry.Action,
    ...(r.entry.Action === 'Skipped' && r.entry.Reason ? { Error: r.entry.Reason } : {}),
  }),
  async finish(deps, _job, plan, results, end) {
    const attested = results.some((r) => r.attestation);
    await deps.store.transact(end(attested ? 201 : 200, { DryRun: false, Type: plan.Type, Result: plan.Result }));
  },
  answer: (head, results): ApproveResult => ({
    ...(head as Pick<ApproveResult, 'DryRun' | 'Type' | 'Result'>),
    Spaces: results.map((r) => r.entry),
    Attestations: results.flatMap((r) => (r.attestation ? [r.attestation] : [])),
  }),
};

/** `cub attestation create`: an attestation of any type in one Space, over a ChangeOrder's revisions there or named ones. */
export async function createAttestation(
  deps: ChangeDeps,
  caller: Caller,
  space: Space,
  o: Omit<ApproveInput, 'Spaces' | 'WhereSpace' | 'Stage'> & { Type: string },
): Promise<ApproveResult> {
  return (await approve(deps, caller, {
    ...o,
    Spaces: [space.SpaceID],
    All: o.All ?? true,
    Async: false,
  })) as ApproveResult;
}
