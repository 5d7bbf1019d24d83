import type { AttrType } from './ast.ts';

/** The attributes a where query may name for one kind of entity, and the related entities it may reach into. */
export interface EntityAttributes {
  entity: string;
  attributes: Record<string, AttrType>;
  relations: Record<string, string>;
}

const common: Record<string, AttrType> = {
  Slug: 'string',
  DisplayName: 'string',
  OrganizationID: 'uuid',
  CreatedAt: 'time',
  UpdatedAt: 'time',
  Version: 'int',
  Labels: 'map',
  Annotations: 'map',
};
const inSpace: Record<string, AttrType> = { ...common, SpaceID: 'uuid', SpaceSlug: 'string' };

/** Per-entity allow-lists: naming anything else in a where query is an error. */
export const ENTITY_ATTRIBUTES: Record<string, EntityAttributes> = {
  Space: {
    entity: 'Space',
    attributes: { ...common, SpaceID: 'uuid', ComponentID: 'uuid', ReleaseTargetID: 'uuid', UpstreamSpaceID: 'uuid' },
    relations: { Component: 'Component', UpstreamSpace: 'Space' },
  },
  Component: {
    entity: 'Component',
    attributes: { ...common, ComponentID: 'uuid', AllowedChangeWorkflowIDs: 'array', ChangeWorkflowRequired: 'bool' },
    relations: {},
  },
  Unit: {
    entity: 'Unit',
    attributes: {
      ...inSpace,
      UnitID: 'uuid',
      ToolchainType: 'string',
      TargetID: 'uuid',
      HeadRevisionNum: 'int',
      LastReleasedRevisionNum: 'int',
      LastChangeDescription: 'string',
      UpstreamUnitID: 'uuid',
      UpstreamSpaceID: 'uuid',
      UpstreamRevisionNum: 'int',
      ChangeSetID: 'uuid',
      DataHash: 'string',
      DataSize: 'int',
      ValidationErrors: 'map',
      ProtectedPaths: 'array',
      Conflicts: 'array',
      DeleteGates: 'map',
    },
    relations: { Space: 'Space', UpstreamUnit: 'Unit', Target: 'Target' },
  },
  Revision: {
    entity: 'Revision',
    attributes: {
      ...inSpace,
      RevisionID: 'uuid',
      RevisionNum: 'int',
      UnitID: 'uuid',
      Description: 'string',
      Source: 'string',
      UserID: 'uuid',
      ChangeSetID: 'uuid',
      DataHash: 'string',
      Tags: 'idset',
      ChangeOrders: 'idset',
      Releases: 'idset',
      Attestations: 'idset',
    },
    relations: {},
  },
  Tag: {
    entity: 'Tag',
    attributes: { ...inSpace, TagID: 'uuid', ChangeOrderID: 'uuid', ChangeSetID: 'uuid', ReleaseID: 'uuid' },
    relations: {},
  },
  ChangeSet: {
    entity: 'ChangeSet',
    attributes: {
      ...inSpace,
      ChangeSetID: 'uuid',
      Description: 'string',
      StartTagID: 'uuid',
      EndTagID: 'uuid',
      State: 'string',
    },
    relations: {},
  },
  Filter: {
    entity: 'Filter',
    attributes: { ...inSpace, FilterID: 'uuid', From: 'string', Where: 'string' },
    relations: {},
  },
  Link: {
    entity: 'Link',
    attributes: {
      ...inSpace,
      LinkID: 'uuid',
      FromUnitID: 'uuid',
      ToUnitID: 'uuid',
      ToSpaceID: 'uuid',
      UpdateType: 'string',
      AutoUpdate: 'bool',
      Stale: 'bool',
      UpstreamLastMergedRevisionNum: 'int',
      DownstreamLastMergedRevisionNum: 'int',
    },
    relations: {},
  },
  Release: {
    entity: 'Release',
    attributes: {
      ...inSpace,
      ReleaseID: 'uuid',
      ReleaseNum: 'int',
      TargetID: 'uuid',
      TagID: 'uuid',
      ChangeOrderID: 'uuid',
      Published: 'bool',
      Digest: 'string',
      UnitCount: 'int',
      UserID: 'uuid',
      PublishedAt: 'time',
    },
    relations: {},
  },
  ChangeWorkflow: { entity: 'ChangeWorkflow', attributes: { ...inSpace, ChangeWorkflowID: 'uuid' }, relations: {} },
  ChangeOrder: {
    entity: 'ChangeOrder',
    attributes: {
      ...inSpace,
      ChangeOrderID: 'uuid',
      Description: 'string',
      UpdateType: 'string',
      ChangeWorkflowID: 'uuid',
      State: 'string',
      Stage: 'string',
      Completed: 'bool',
      InScopeSpaceIDs: 'array',
      ResolvedSpaceIDs: 'array',
      ReleasedSpaceIDs: 'array',
      RestoredSpaceIDs: 'array',
      ReleasedRestoredSpaceIDs: 'array',
      WhereSpace: 'string',
      AbortedReason: 'string',
      AbortedAt: 'time',
      AbortedBy: 'uuid',
      PriorRevisions: 'string',
    },
    relations: {},
  },
  Target: { entity: 'Target', attributes: { ...inSpace, TargetID: 'uuid', Facts: 'map' }, relations: {} },
  Invocation: {
    entity: 'Invocation',
    attributes: { ...inSpace, InvocationID: 'uuid', ToolchainType: 'string' },
    relations: {},
  },
  User: {
    entity: 'User',
    attributes: {
      Slug: 'string',
      DisplayName: 'string',
      OrganizationID: 'uuid',
      CreatedAt: 'time',
      UpdatedAt: 'time',
      Version: 'int',
      UserID: 'uuid',
      Role: 'string',
    },
    relations: {},
  },
  Group: {
    entity: 'Group',
    attributes: {
      Slug: 'string',
      DisplayName: 'string',
      OrganizationID: 'uuid',
      CreatedAt: 'time',
      UpdatedAt: 'time',
      Version: 'int',
      GroupID: 'uuid',
      MemberUserIDs: 'array',
    },
    relations: {},
  },
  Attestation: {
    entity: 'Attestation',
    attributes: {
      ...inSpace,
      AttestationID: 'uuid',
      UserID: 'uuid',
      Type: 'string',
      Result: 'string',
      Note: 'string',
      ChangeOrderID: 'uuid',
      ReleaseID: 'uuid',
      ExpiresAt: 'time',
      RevokedAttestationID: 'uuid',
      Claims: 'map',
    },
    relations: {},
  },
};

/** The entity kinds a Filter's `From` may name. */
export const FILTERABLE = Object.keys(ENTITY_ATTRIBUTES);
