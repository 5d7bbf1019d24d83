/**
 * One example of each event, as a consumer receives it (detail-type, source, detail): checked against
 * its contract by the tests and printed in docs/reference/events.md by `npm run docs`, so the two cannot drift.
 */
import { DetailType, HOOK_SOURCE, SOURCE, type BatonEvent } from './contracts.ts';
import { ARGO_APP, FLUX_EVENT, type HookOutcome } from './deploy-tool-examples.ts';
import { ATTESTATION, BASE, CO, id, ORG, PROD, RELEASE, TARGET, USER } from './example-ids.ts';
import { WINDOW_EXAMPLES } from './examples-windows.ts';

const gate = {
  Prerequisite: 'Healthy',
  Satisfied: false,
  SpaceID: PROD,
  SpaceSlug: 'acme-staging',
  Message: 'release 7 of acme-staging is Degraded',
};

/** What each event means and an example of it (a deploy tool's, with what posting it produces). */
export const EVENT_EXAMPLES: { meaning: string; event: BatonEvent; produces?: HookOutcome }[] = [
  {
    meaning: 'A ChangeOrder was created in its base: the change has a name, a kind and a scope.',
    event: {
      source: SOURCE,
      detailType: DetailType.ChangeOrderCreated,
      detail: {
        EventID: id(1),
        OrganizationID: ORG,
        SpaceID: BASE,
        ChangeOrderID: CO,
        Slug: 'release-v452',
        UpdateType: 'UpgradeUnit',
        ChangeWorkflowID: id(9),
        InScopeSpaceCount: 1,
        UserID: USER,
      },
    },
  },
  {
    meaning: 'The Stage a ChangeOrder has reached moved forward (it never moves back).',
    event: {
      source: SOURCE,
      detailType: DetailType.ChangeOrderStageAdvanced,
      detail: {
        EventID: id(2),
        OrganizationID: ORG,
        SpaceID: BASE,
        ChangeOrderID: CO,
        Slug: 'release-v452',
        Stage: 'Staging',
        PreviousStage: 'Development',
      },
    },
  },
  {
    meaning:
      'The last Stage satisfied the Final prerequisites: the rollout is done (sent with the Stage Advanced event to Completed).',
    event: {
      source: SOURCE,
      detailType: DetailType.ChangeOrderCompleted,
      detail: {
        EventID: id(3),
        OrganizationID: ORG,
        SpaceID: BASE,
        ChangeOrderID: CO,
        Slug: 'release-v452',
        Stage: 'Completed',
        PreviousStage: 'Production',
      },
    },
  },
  {
    meaning: 'A ChangeOrder was aborted: it is not coming to the Spaces still waiting for it.',
    event: {
      source: SOURCE,
      detailType: DetailType.ChangeOrderAborted,
      detail: {
        EventID: id(4),
        OrganizationID: ORG,
        SpaceID: BASE,
        ChangeOrderID: CO,
        Slug: 'release-v452',
        AbortedReason: 'superseded by v453',
        AbortedAt: '2026-12-03T10:00:00.000Z',
        AbortedBy: USER,
      },
    },
  },
  {
    meaning:
      'A demote took the ChangeOrder back out of one Space: each Unit it had marked there is back at its start revision.',
    event: {
      source: SOURCE,
      detailType: DetailType.ChangeOrderRestored,
      detail: {
        EventID: id(5),
        OrganizationID: ORG,
        SpaceID: PROD,
        SpaceSlug: 'acme-prod-use1',
        ChangeOrderID: CO,
        Slug: 'release-v452',
        RestoredAt: '2026-12-03T10:05:00.000Z',
        UserID: USER,
        Units: [{ UnitID: id(6), UnitSlug: 'deployment', RevisionNum: 5 }],
      },
    },
  },
  {
    meaning:
      "A promotion did not land in every Space it targeted: the ones it failed or blocked in (the first 1,000 by ID, `SpaceCount` of them in all; the promotion's answer (its job's, past 100 Spaces) has every one; the ChangeOrder's PromotionFailures lists 200), so an event fits EventBridge's 256 KB at any fleet size.",
    event: {
      source: SOURCE,
      detailType: DetailType.PromotionFailed,
      detail: {
        EventID: id(6),
        OrganizationID: ORG,
        ChangeOrderID: CO,
        Slug: 'release-v452',
        Stage: 'Production',
        SpaceIDs: [PROD],
        SpaceCount: 1,
      },
    },
  },
  {
    meaning:
      'A promotion was forced past failing gates with `--force --force-reason`: the gates (the first 100 of `FailedGateCount`), the Spaces (the first 1,000 of `SpaceCount`), who and why.',
    event: {
      source: SOURCE,
      detailType: DetailType.PromotionOverridden,
      detail: {
        EventID: id(7),
        OrganizationID: ORG,
        ChangeOrderID: CO,
        Slug: 'release-v452',
        Stage: 'Production',
        SpaceIDs: [PROD],
        SpaceCount: 1,
        FailedGates: [gate],
        FailedGateCount: 1,
        Reason: 'hotfix for INC-1234',
        UserID: USER,
      },
    },
  },
  {
    meaning: 'A Release was published in a Space (carrying a ChangeOrder when it released one).',
    event: {
      source: SOURCE,
      detailType: DetailType.ReleasePublished,
      detail: {
        EventID: id(8),
        OrganizationID: ORG,
        SpaceID: PROD,
        SpaceSlug: 'acme-prod-use1',
        ReleaseID: RELEASE,
        ReleaseNum: 7,
        TargetID: TARGET,
        Digest: 'sha256:5e1f…',
        UnitCount: 2,
        ChangeOrderID: CO,
      },
    },
  },
  {
    meaning:
      "A Release's live status changed (reported by Argo CD or Flux, or written through the API): Stages are re-evaluated.",
    event: {
      source: SOURCE,
      detailType: DetailType.ReleaseLiveStatusChanged,
      detail: {
        EventID: id(9),
        OrganizationID: ORG,
        SpaceID: PROD,
        SpaceSlug: 'acme-prod-use1',
        ReleaseID: RELEASE,
        ReleaseNum: 7,
        LiveStatus: { Sync: 'Synced', Health: 'Healthy', Reporter: 'argocd', ObservedAt: '2026-12-03T10:10:00.000Z' },
        Previous: { Sync: 'Synced', Health: 'Progressing' },
      },
    },
  },
  {
    meaning:
      'An attestation (an approval, a rejection, another type) was recorded in a Space: Stages are re-evaluated.',
    event: {
      source: SOURCE,
      detailType: DetailType.AttestationRecorded,
      detail: {
        EventID: id(1),
        OrganizationID: ORG,
        SpaceID: PROD,
        SpaceSlug: 'acme-prod-use1',
        AttestationID: ATTESTATION,
        Type: 'Approval',
        Result: 'Pass',
        UserID: USER,
        ChangeOrderID: CO,
      },
    },
  },
  {
    meaning:
      'A hold was placed: while it is in force, promotions into what it covers (here: the ChangeOrders of one workflow) wait, unless forced with a reason.',
    event: {
      source: SOURCE,
      detailType: DetailType.HoldPlaced,
      detail: {
        EventID: id(4),
        OrganizationID: ORG,
        HoldID: id(5),
        Slug: 'year-end-freeze',
        Scope: 'Workflow',
        SpaceID: BASE,
        ChangeWorkflowID: id(9),
        Blocks: ['promote'],
        Reason: 'year-end change freeze',
        OwnerID: USER,
        ExpiresAt: '2027-01-04T00:00:00.000Z',
      },
    },
  },
  {
    meaning: 'A hold was lifted by its owner or an Admin, with a note.',
    event: {
      source: SOURCE,
      detailType: DetailType.HoldLifted,
      detail: {
        EventID: id(6),
        OrganizationID: ORG,
        HoldID: id(5),
        Slug: 'year-end-freeze',
        Scope: 'Workflow',
        SpaceID: BASE,
        ChangeWorkflowID: id(9),
        Blocks: ['promote'],
        Reason: 'year-end change freeze',
        OwnerID: USER,
        LiftedBy: USER,
        LiftNote: 'freeze over early',
      },
    },
  },
  {
    meaning: 'An attestation was revoked (a revocation recorded beside it, naming it): Stages are re-evaluated.',
    event: {
      source: SOURCE,
      detailType: DetailType.AttestationRevoked,
      detail: {
        EventID: id(2),
        OrganizationID: ORG,
        SpaceID: PROD,
        SpaceSlug: 'acme-prod-use1',
        AttestationID: id(3),
        Type: 'Approval',
        Result: 'Pass',
        UserID: USER,
        ChangeOrderID: CO,
        RevokedAttestationID: ATTESTATION,
      },
    },
  },
  {
    meaning:
      'An Argo CD application, as Argo CD Notifications sends it (`{"app": {{toJson .app}}}`), put on the bus by a sender of your own (`POST /hooks/argocd` applies the same body at once and answers whether it took it); the live-status consumer applies it to a Release\'s LiveStatus by the same rules, and records what it cannot apply in its dead-letter queue. The Target `clusters/prod-use1` names the application, so it applies to the Space releasing to that Target; its revision is the digest of that Space\'s release 1.',
    event: {
      source: HOOK_SOURCE,
      detailType: DetailType.ArgoCd,
      detail: { OrganizationID: ORG, ReceivedAt: '2026-12-03T10:09:58.000Z', Payload: { app: ARGO_APP } },
    },
    produces: {
      Hook: '/hooks/argocd',
      SpaceSlug: 'acme-prod-use1',
      ReleaseNum: 1,
      LiveStatus: {
        Sync: 'Synced',
        Health: 'Healthy',
        Operation: 'Succeeded',
        Reporter: 'argocd',
        DataSource: 'argocd:argocd/acme-prod-use1',
        Message: 'successfully synced (all tasks run)',
        ObservedAt: '2026-12-03T10:09:50Z',
      },
    },
  },
  {
    meaning:
      "A Flux notification-controller event, as its generic(-hmac) provider sends it, put on the bus by a sender of your own (`POST /hooks/flux` applies the same body at once); applied to a Release's LiveStatus by the same rules as the hook. The Target `clusters/prod-euw1` names the Kustomization; its OCI revision carries the digest of release 1 of the Space releasing there.",
    event: {
      source: HOOK_SOURCE,
      detailType: DetailType.Flux,
      detail: { OrganizationID: ORG, ReceivedAt: '2026-12-03T10:09:59.000Z', Payload: FLUX_EVENT },
    },
    produces: {
      Hook: '/hooks/flux',
      SpaceSlug: 'acme-prod-euw1',
      ReleaseNum: 1,
      LiveStatus: {
        Sync: 'Synced',
        Health: 'Healthy',
        Operation: 'Succeeded',
        Reporter: 'kustomize-controller',
        DataSource: 'flux:Kustomization/flux-system/acme-prod-euw1',
        Message: 'ReconciliationSucceeded: Reconciliation finished in 1.204s, next run in 10m0s',
        ObservedAt: '2026-12-03T10:09:59Z',
      },
    },
  },
  ...WINDOW_EXAMPLES,
];
