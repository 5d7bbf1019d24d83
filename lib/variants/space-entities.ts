import {
  ChangeSetState,
  newEntity,
  patched,
  patchMap,
  type Caller,
  type ChangeSet,
  type InSpace,
  type Invocation,
  type Space,
  type Tag,
  type Unit,
} from '../model/entities.ts';
import { nameArguments, validateInvocation } from '../config/invocations.ts';
import { Conflict, expectVersion, Invalid } from '../model/errors.ts';
import type { SpaceKind } from '../ports/store.ts';
import { FILTERABLE, parseWhere } from '../where/index.ts';
import type { UnitDeps } from './ports.ts';

/** The kinds kept alike in a Space: Tags, ChangeSets, Filters and Targets. */
export type SimpleKind = 'Tag' | 'ChangeSet' | 'Filter' | 'Target' | 'Invocation';

/** What a person gives to create or change one: common fields, and the kind's own. */
export type EntityInput = {
  Slug?: string;
  DisplayName?: string;
  Labels?: Record<string, string | null>;
  Annotations?: Record<string, string | null>;
  Version?: number;
} & Record<string, unknown>;

type Item = InSpace & Record<string, unknown>;

/** Each kind's own rules: the fields a new one gets (checked), and how an update applies (or is refused). */
const RULES: Record<
  SimpleKind,
  {
    idField: string;
    fields(body: EntityInput): Record<string, unknown>;
    apply?(item: Item, body: EntityInput): Record<string, unknown>;
  }
> = {
  Tag: { idField: 'TagID', fields: () => ({}) },
  ChangeSet: {
    idField: 'ChangeSetID',
    fields: (body) => ({ Description: body.Description ?? '', State: ChangeSetState.Open }),
    apply(item, body) {
      if (item.State === ChangeSetState.Closed && body.State === ChangeSetState.Open)
        throw new Conflict(`changeset '${item.Slug}' is closed and cannot be reopened; open a new one`);
      return { Description: body.Description ?? item.Description, State: body.State ?? item.State };
    },
  },
  Filter: {
    idField: 'FilterID',
    fields(body) {
      const from = String(body.From);
      if (!FILTERABLE.includes(from))
        throw new Invalid(`From '${from}' is not an entity a filter can select; one of ${FILTERABLE.join(', ')}`);
      parseWhere(String(body.Where), from);
      return { From: from, Where: body.Where };
    },
    apply(item, body) {
      if (body.Where !== undefined) parseWhere(String(body.Where), String(item.From));
      return { Where: body.Where ?? item.Where };
    },
  },
  Invocation: {
    idField: 'InvocationID',
    fields(body) {
      const i = body as unknown as Pick<Invocation, 'ToolchainType' | 'FunctionInvocations' | 'Parameters'>;
      const calls = i.FunctionInvocations.map(nameArguments);
      validateInvocation(i.ToolchainType, calls, i.Parameters ?? []);
      return { ToolchainType: i.ToolchainType, FunctionInvocations: calls, Parameters: i.Parameters ?? [] };
    },
    apply(item, body) {
      const cur = item as unknown as Invocation;
      const next = {
        FunctionInvocations: (
          (body.FunctionInvocations as Invocation['FunctionInvocations'] | undefined) ?? cur.FunctionInvocations
        ).map(nameArguments),
        Parameters: (body.Parameters as Invocation['Parameters'] | undefined) ?? cur.Parameters,
      };
      validateInvocation(cur.ToolchainType, next.FunctionInvocations, next.Parameters);
      return next;
    },
  },
  Target: {
    idField: 'TargetID',
    fields: (body) => ({ Facts: body.Facts ?? {}, ...(body.DeployObject ? { DeployObject: body.DeployObject } : {}) }),
    apply: (item, body) => ({
      Facts: patchMap(
        (item.Facts ?? {}) as Record<string, string>,
        body.Facts as Record<string, string | null> | undefined,
      ),
      // null takes the deploy tool's object off; absent leaves it.
      DeployObject: body.DeployObject === null ? undefined : (body.DeployObject ?? item.DeployObject),
    }),
  },
};

/** A deploy tool's object deploys one Target: a report about it must name one place. Refuses one another Target of the organization names. */
async function deployObjectFree(deps: UnitDeps, target: Item): Promise<void> {
  const object = target.DeployObject as string | undefined;
  if (!object) return;
  const other = (await deps.store.targetsDeploying(target.OrganizationID, object)).find(
    (t) => t.TargetID !== target.TargetID,
  );
  if (other) {
    const home = await deps.store.getSpace(target.OrganizationID, other.SpaceID);
    throw new Conflict(
      `${object} already deploys target '${home?.Slug ?? other.SpaceID}/${other.Slug}': a deploy tool's object names one Target; take it off that one first (cub target update --space ${home?.Slug ?? other.SpaceID} ${other.Slug} --remove-deploy-object)`,
    );
  }
}

/** Creates a Tag, ChangeSet, Filter or Target in a Space. */
export async function createSpaceEntity(
  deps: UnitDeps,
  caller: Caller,
  space: Space,
  kind: SimpleKind,
  body: EntityInput & { Slug: string },
): Promise<Item> {
  const rules = RULES[kind];
  const item = {
    ...newEntity(deps, caller.OrganizationID, {
      ...body,
      Labels: body.Labels as Record<string, string> | undefined,
      Annotations: body.Annotations as Record<string, string> | undefined,
    }),
    SpaceID: space.SpaceID,
    [rules.idField]: deps.newId(),
    ...rules.fields(body),
  } as Item;
  if (kind === 'Target') await deployObjectFree(deps, item);
  await deps.store.createInSpace(kind, item);
  return item;
}

/** Updates one, guarded by its Version; closing an open ChangeSet mints its Tags and unlocks its Units in the same transaction. */
export async function updateSpaceEntity(
  deps: UnitDeps,
  space: Space,
  kind: SimpleKind,
  item: Item,
  body: EntityInput,
): Promise<Item> {
  expectVersion(`${kind} '${item.Slug}'`, item.Version, body.Version);
  const next = { ...patched(item, body, deps), ...(RULES[kind].apply?.(item, body) ?? {}) } as Item;
  if (kind === 'Target') await deployObjectFree(deps, next);
  if (kind === 'ChangeSet' && item.State === ChangeSetState.Open && next.State === ChangeSetState.Closed)
    await closeChangeSet(deps, space, item as unknown as ChangeSet, next);
  else await deps.store.updateInSpace(kind, next, item.Version, item.Slug);
  return next;
}

/** Deletes one; an open ChangeSet that still locks Units is refused, and so is a ChangeOrder's Tag (the ChangeOrder is read from them). */
export async function deleteSpaceEntity(deps: UnitDeps, space: Space, kind: SpaceKind, item: Item): Promise<void> {
  if (kind === 'Tag' && item.ChangeOrderID)
    throw new Conflict(
      `tag '${item.Slug}' belongs to a change order; where the change has got to is read from its marks`,
    );
  if (
    kind === 'ChangeSet' &&
    item.State === ChangeSetState.Open &&
    (await lockedBy(deps, space, String(item.ChangeSetID))).length
  ) {
    throw new Conflict(`changeset '${item.Slug}' is open and locks units; close it first`);
  }
  await deps.store.deleteInSpace(kind, item);
}

async function lockedBy(deps: UnitDeps, space: Space, changeSetId: string): Promise<Unit[]> {
  return (await deps.store.listUnits(space.SpaceID)).filter((u) => u.ChangeSetID === changeSetId);
}

/** Closing mints `<slug>-start` and `<slug>-end`, marks each unit it changed, and unlocks them, in one transaction. */
async function closeChangeSet(
  deps: UnitDeps,
  space: Space,
  cs: ChangeSet,
  next: Record<string, unknown>,
): Promise<void> {
  const units = await lockedBy(deps, space, cs.ChangeSetID);
  const tag = (suffix: string): Tag => ({
    ...newEntity(deps, cs.OrganizationID, { Slug: `${cs.Slug}-${suffix}` }),
    SpaceID: space.SpaceID,
    TagID: deps.newId(),
    ChangeSetID: cs.ChangeSetID,
  });
  const start = tag('start');
  const end = tag('end');
  Object.assign(next, { StartTagID: start.TagID, EndTagID: end.TagID });
  const now = String(next.UpdatedAt);
  const marks = units.flatMap((u) => [
    {
      TagID: start.TagID,
      UnitID: u.UnitID,
      SpaceID: space.SpaceID,
      RevisionNum: u.ChangeSetStartRevisionNum ?? 0,
      UpdatedAt: now,
    },
    { TagID: end.TagID, UnitID: u.UnitID, SpaceID: space.SpaceID, RevisionNum: u.HeadRevisionNum, UpdatedAt: now },
  ]);
  await deps.store.closeChangeSet(cs, next, [start, end], marks, units);
}
