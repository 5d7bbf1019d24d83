import { Entity } from 'electrodb';
import { LinkUpdateTypes, TOOLCHAIN_TYPES } from '../model/entities.ts';
import {
  any,
  common,
  inSpace,
  key,
  num,
  primary,
  reqAny,
  reqNum,
  reqStr,
  service,
  spaceEntity,
  str,
} from './entity-kit.ts';

/** Spaces, Components, Units, their revisions and mutations, the Space-resident kinds, Targets, Links and marks. */

const MARK_ROLES = ['start', 'end', 'publish', 'restore'] as const;

export const Space = new Entity({
  model: { entity: 'space', version: '1', service },
  attributes: {
    ...common,
    SpaceID: reqStr,
    ComponentID: str,
    ReleaseTargetID: str,
    UpstreamSpaceID: str,
    Permissions: any,
  },
  indexes: {
    primary: primary(['OrganizationID'], ['SpaceID']),
    // The Spaces a Target is attached to (where a deploy tool's report about it applies).
    byTarget: {
      index: 'gsi1',
      condition: (s: Record<string, unknown>) => !!s.ReleaseTargetID,
      pk: key(['ReleaseTargetID'], 'gsi1pk'),
      sk: key([], 'gsi1sk'),
    },
  },
});

export const Component = new Entity({
  model: { entity: 'component', version: '1', service },
  attributes: {
    ...common,
    ComponentID: reqStr,
    AllowedChangeWorkflowIDs: any,
    ChangeWorkflowRequired: { type: 'boolean' },
  },
  indexes: { primary: primary(['OrganizationID'], ['ComponentID']) },
});

export const Unit = new Entity({
  model: { entity: 'unit', version: '1', service },
  attributes: {
    ...inSpace,
    UnitID: reqStr,
    ToolchainType: { type: TOOLCHAIN_TYPES, required: true },
    TargetID: str,
    HeadRevisionNum: reqNum,
    LastReleasedRevisionNum: reqNum,
    LastChangeDescription: str,
    UpstreamUnitID: str,
    UpstreamSpaceID: str,
    UpstreamRevisionNum: reqNum,
    ChangeSetID: str,
    ChangeSetStartRevisionNum: num,
    Conflicts: reqAny,
    ProtectedPaths: reqAny,
    DeleteGates: any,
    DataHash: reqStr,
    DataSize: reqNum,
    ValidationErrors: reqAny,
  },
  indexes: { primary: primary(['SpaceID'], ['UnitID']) },
});

const revisionNum = { type: 'number', required: true, padding: { length: 10, char: '0' } } as const;

/** An immutable revision with its compressed data; the sort key is the zero-padded number, so ranges are one query. */
export const Revision = new Entity({
  model: { entity: 'revision', version: '1', service },
  attributes: {
    OrganizationID: reqStr,
    SpaceID: reqStr,
    UnitID: reqStr,
    RevisionID: reqStr,
    RevisionNum: revisionNum,
    Description: str,
    Source: reqStr,
    UserID: reqStr,
    ChangeSetID: str,
    DataHash: reqStr,
    DataSize: reqNum,
    ValidationErrors: any,
    Data: reqStr,
    CreatedAt: reqStr,
  },
  indexes: { primary: primary(['UnitID'], ['RevisionNum']) },
});

/** What one revision changed and why: path-level changes plus the operation's parameters. */
export const Mutation = new Entity({
  model: { entity: 'mutation', version: '1', service },
  attributes: {
    OrganizationID: reqStr,
    SpaceID: reqStr,
    UnitID: reqStr,
    MutationID: reqStr,
    RevisionNum: revisionNum,
    Source: reqStr,
    FunctionInvocation: any,
    InvocationID: str,
    LinkID: str,
    MergeSourceID: str,
    MergeBaseRevisionNum: num,
    MergeEndRevisionNum: num,
    RestoredRevisionNum: num,
    Changes: reqAny,
    ChangesOmitted: num,
    CreatedAt: reqStr,
  },
  indexes: { primary: primary(['UnitID'], ['RevisionNum']) },
});

export const Tag = spaceEntity('tag', 'TagID', { ChangeOrderID: str, ChangeSetID: str, ReleaseID: str });
export const ChangeSet = spaceEntity('changeset', 'ChangeSetID', {
  Description: str,
  StartTagID: str,
  EndTagID: str,
  State: str,
});
export const Filter = spaceEntity('filter', 'FilterID', { From: str, Where: str });
export const Invocation = spaceEntity('invocation', 'InvocationID', {
  ToolchainType: reqStr,
  FunctionInvocations: reqAny,
  Parameters: reqAny,
} as never);

/** A release Target; DeployObject (the Argo CD Application or Flux object that deploys it) is found by the organization's index of them. */
export const Target = new Entity({
  model: { entity: 'target', version: '1', service },
  attributes: {
    ...inSpace,
    TargetID: reqStr,
    Facts: any,
    LastReleaseNum: num,
    DeployObject: str,
    // The index's key: the object within its organization (`<org>#<object>`), written with DeployObject by the store; a Target without one is not in the index.
    DeployKey: { type: 'string', hidden: true },
  },
  indexes: {
    primary: primary(['SpaceID'], ['TargetID']),
    byDeployObject: {
      index: 'gsi1',
      condition: (t: Record<string, unknown>) => !!t.DeployObject,
      pk: key(['DeployKey'], 'gsi1pk'),
      sk: key([], 'gsi1sk'),
    },
  },
});

/** A Link lives in its downstream Space; the GSI serves "the Links pointing at a Unit" (merge cursors, fan-out). */
export const Link = new Entity({
  model: { entity: 'link', version: '1', service },
  attributes: {
    ...inSpace,
    LinkID: reqStr,
    FromUnitID: reqStr,
    ToUnitID: reqStr,
    ToSpaceID: reqStr,
    UpdateType: { type: LinkUpdateTypes, required: true },
    AutoUpdate: { type: 'boolean' },
    Protect: { type: 'boolean' },
    Squash: { type: 'boolean' },
    UpstreamLastMergedRevisionNum: reqNum,
    DownstreamLastMergedRevisionNum: reqNum,
    UpstreamPaths: any,
    DownstreamSetters: any,
  },
  indexes: {
    primary: primary(['SpaceID'], ['LinkID']),
    byUpstream: { index: 'gsi1', pk: key(['ToUnitID'], 'gsi1pk'), sk: key(['LinkID'], 'gsi1sk') },
  },
});

/** A Tag's mark on one Unit: at most one revision per (Tag, Unit). The GSI serves "the Tags of a Unit". */
export const Mark = new Entity({
  model: { entity: 'mark', version: '1', service },
  attributes: {
    TagID: reqStr,
    UnitID: reqStr,
    SpaceID: reqStr,
    RevisionNum: { type: 'number', required: true },
    UpdatedAt: reqStr,
    ChangeOrderID: str,
    Role: { type: MARK_ROLES },
  },
  indexes: {
    primary: primary(['TagID'], ['UnitID']),
    byUnit: { index: 'gsi1', pk: key(['UnitID'], 'gsi1pk'), sk: key(['TagID'], 'gsi1sk') },
  },
});
