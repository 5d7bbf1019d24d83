import {
  MarkRole,
  newEntity,
  type Caller,
  type ChangeOrder,
  type ChangeWorkflow,
  type Mark,
  type Space,
  type Tag,
  type Unit,
  type WorkflowDefinition,
} from '../model/entities.ts';
import { DetailType, SOURCE } from '../events/contracts.ts';
import { eventOps } from '../events/outbox.ts';
import type { Deps } from '../ports/deps.ts';
import type { StoreOp } from '../ports/store.ts';
import { TRANSACTION_MAX_ITEMS } from '../util/chunk.ts';
import { Invalid } from '../model/errors.ts';
import { firstStageGatesProblem } from './workflow.ts';
import type { ChangeDeps } from './ports.ts';

/** A ChangeOrder's marks: where each Unit's interval starts and ends, and what a Release of it bundles. */
export interface CoMarks {
  start: Map<string, Mark>;
  end: Map<string, Mark>;
  publish: Map<string, Mark>;
  /** Where a demote restored each Unit (empty until the first demote). */
  restore: Map<string, Mark>;
}

/**
 * The publish marks of a ChangeOrder not read (`marksOf(…, { publish: false })`): writing into it works
 * (a dry run's preview), reading from it is a bug and throws rather than answering "no marks".
 */
export class UnreadMarks extends Map<string, Mark> {
  private unread(): never {
    throw new Error("the change order's publish marks were not read: read them with withPublishMarks first");
  }
  override get(): never {
    return this.unread();
  }
  override has(): never {
    return this.unread();
  }
  override values(): never {
    return this.unread();
  }
  override entries(): never {
    return this.unread();
  }
  override keys(): never {
    return this.unread();
  }
  override forEach(): never {
    return this.unread();
  }
  override [Symbol.iterator](): never {
    return this.unread();
  }
}

const byUnit = (l: Mark[]) => new Map(l.map((m) => [m.UnitID, m]));

/**
 * Reads a ChangeOrder's Tags' marks, by Unit. With `publish: false` its publish marks are left unread
 * (a merge never reads them; a gate over Releases does, after `withPublishMarks`): one query fewer.
 */
export async function marksOf(deps: ChangeDeps, co: ChangeOrder, o: { publish?: boolean } = {}): Promise<CoMarks> {
  const [start, end, publish, restore] = await Promise.all([
    deps.store.marksOfTag(co.StartTagID),
    deps.store.marksOfTag(co.EndTagID),
    o.publish === false ? undefined : deps.store.marksOfTag(co.PublishTagID),
    co.RestoreTagID ? deps.store.marksOfTag(co.RestoreTagID) : [],
  ]);
  return {
    start: byUnit(start),
    end: byUnit(end),
    publish: publish ? byUnit(publish) : new UnreadMarks(),
    restore: byUnit(restore),
  };
}

/**
 * A ChangeOrder's marks on one Space's Units, read by key (the Space's Units, then each of the ChangeOrder's Tags on
 * them, in one batch): what a gate over that Space alone reads (a Release there), not its marks in every Space of its
 * scope. A Unit's marks go when it is deleted, so these are the marks `marksOf` holds for the Space.
 */
export async function marksIn(
  deps: ChangeDeps,
  co: ChangeOrder,
  space: Space,
  listed?: Promise<Unit[]>,
): Promise<CoMarks> {
  const units = await (listed ?? deps.store.listUnits(space.SpaceID));
  const tags = [co.StartTagID, co.EndTagID, co.PublishTagID, ...(co.RestoreTagID ? [co.RestoreTagID] : [])];
  const read = units.length
    ? await deps.store.marksAt(
        units.map((u) => u.UnitID),
        tags,
      )
    : [];
  const of = (tagId: string | undefined) => byUnit(read.filter((m) => m.TagID === tagId));
  return { start: of(co.StartTagID), end: of(co.EndTagID), publish: of(co.PublishTagID), restore: of(co.RestoreTagID) };
}

/** The marks with their publish marks read, if they were not. */
export async function withPublishMarks(deps: ChangeDeps, co: ChangeOrder, marks: CoMarks): Promise<CoMarks> {
  if (!(marks.publish instanceof UnreadMarks)) return marks;
  return {
    ...marks,
    publish: byUnit(await deps.store.marksOfTag(co.PublishTagID)),
  };
}

/** The Tag of a ChangeOrder that plays a role. */
export function tagOf(co: ChangeOrder, role: MarkRole): string {
  if (role === MarkRole.restore) {
    if (!co.RestoreTagID) throw new Error(`change order '${co.Slug}' has no restore Tag yet`);
    return co.RestoreTagID;
  }
  return role === MarkRole.start ? co.StartTagID : role === MarkRole.end ? co.EndTagID : co.PublishTagID;
}

/** The write of one of a ChangeOrder's marks on a Unit's revision (`move`: replace one already there). */
export function markOp(co: ChangeOrder, role: MarkRole, unit: Unit, rev: number, now: string, move = false): StoreOp {
  const item: Mark = {
    TagID: tagOf(co, role),
    UnitID: unit.UnitID,
    SpaceID: unit.SpaceID,
    RevisionNum: rev,
    UpdatedAt: now,
    ChangeOrderID: co.ChangeOrderID,
    Role: role,
  };
  return move ? { op: 'put', kind: 'Mark', item } : { op: 'create', kind: 'Mark', item };
}

/**
 * How many mark ops one transaction of marks alone takes: whole Units' three, so each Unit's start and
 * release marks are written with its end mark.
 */
export const MARK_OPS_PER_TRANSACTION = TRANSACTION_MAX_ITEMS - (TRANSACTION_MAX_ITEMS % 3);

/** The three marks of a Unit whose interval is (start, end]: what a Release of it bundles starts at the end. */
export function intervalMarks(co: ChangeOrder, unit: Unit, start: number, end: number, now: string): StoreOp[] {
  return [
    markOp(co, MarkRole.start, unit, start, now),
    markOp(co, MarkRole.end, unit, end, now),
    markOp(co, MarkRole.publish, unit, end, now),
  ];
}

/** A new ChangeOrder's start, end and publish Tags (`<slug>-co-start|end|publish`), in its base. */
export function changeOrderTags(
  deps: Pick<Deps, 'now' | 'newId'>,
  caller: Caller,
  base: Space,
  slug: string,
  coId: string,
): [Tag, Tag, Tag] {
  const tag = (suffix: string): Tag => ({
    ...newEntity(deps, caller.OrganizationID, { Slug: `${slug}-co-${suffix}` }),
    SpaceID: base.SpaceID,
    TagID: deps.newId(),
    ChangeOrderID: coId,
  });
  return [tag('start'), tag('end'), tag('publish')];
}

/** The definition a ChangeOrder copies from its workflow, so editing the workflow later changes no rollout under way. */
export function workflowCopy(w: ChangeWorkflow | undefined): WorkflowDefinition | undefined {
  return w
    ? {
        Stages: w.Stages,
        Final: w.Final,
        CustomPrerequisites: w.CustomPrerequisites,
        AttestationPrerequisites: w.AttestationPrerequisites,
      }
    : undefined;
}

/** What a new ChangeOrder is made from: its own fields, and the workflow whose definition it copies. */
export type NewChangeOrder = Pick<ChangeOrder, 'Slug' | 'UpdateType' | 'InScopeSpaceIDs'> &
  Partial<
    Omit<
      ChangeOrder,
      'ChangeOrderID' | 'StartTagID' | 'EndTagID' | 'PublishTagID' | 'ChangeWorkflow' | 'ChangeWorkflowID'
    >
  > & { workflow?: ChangeWorkflow };

/** A new ChangeOrder in its base with its three Tags, nothing promoted, failed or overridden yet; the caller writes them. */
export function newChangeOrder(
  deps: Pick<Deps, 'now' | 'newId'>,
  caller: Caller,
  base: Space,
  f: NewChangeOrder,
): { co: ChangeOrder; tags: [Tag, Tag, Tag] } {
  const { workflow, Labels, Slug, ...fields } = f;
  const problem = workflow && firstStageGatesProblem(f.UpdateType, workflow);
  if (problem) throw new Invalid(problem);
  const coId = deps.newId();
  const tags = changeOrderTags(deps, caller, base, Slug, coId);
  const co: ChangeOrder = {
    ...newEntity(deps, caller.OrganizationID, { Slug, Labels }),
    SkippedUnits: {},
    PriorRevisions: 'Include',
    Promotions: [],
    PromotionFailures: [],
    PromotionOverrides: [],
    ...fields,
    SpaceID: base.SpaceID,
    ChangeOrderID: coId,
    ChangeWorkflowID: workflow?.ChangeWorkflowID,
    ...(workflow ? { ChangeWorkflowSpaceID: workflow.SpaceID, ChangeWorkflowSlug: workflow.Slug } : {}),
    ChangeWorkflow: workflowCopy(workflow),
    StartTagID: tags[0].TagID,
    EndTagID: tags[1].TagID,
    PublishTagID: tags[2].TagID,
  };
  return { co, tags };
}

/** The outbox item announcing a new ChangeOrder: written in the transaction that creates it. */
export function createdEvent(deps: Pick<Deps, 'now' | 'newId'>, caller: Caller, co: ChangeOrder): StoreOp[] {
  return eventOps(deps, [
    {
      source: SOURCE,
      detailType: DetailType.ChangeOrderCreated,
      detail: {
        OrganizationID: co.OrganizationID,
        SpaceID: co.SpaceID,
        ChangeOrderID: co.ChangeOrderID,
        Slug: co.Slug,
        UpdateType: co.UpdateType,
        ChangeWorkflowID: co.ChangeWorkflowID,
        InScopeSpaceCount: co.InScopeSpaceIDs.length,
        UserID: caller.UserID,
      },
    },
  ]);
}
