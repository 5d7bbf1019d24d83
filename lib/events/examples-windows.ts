/** The examples of the deploy-window and recall events (issue 40), printed with the rest in docs/reference/events.md. */
import { DetailType, SOURCE, type BatonEvent } from './contracts.ts';
import { BASE, CO, id, ORG, USER } from './example-ids.ts';

export const WINDOW_EXAMPLES: { meaning: string; event: BatonEvent }[] = [
  {
    meaning:
      'A deploy window was made: promotions into what it covers (here: the prod Stage of one workflow) go only while it is open, Monday to Thursday from 09:00 Berlin time for six hours.',
    event: {
      source: SOURCE,
      detailType: DetailType.WindowCreated,
      detail: {
        EventID: id(20),
        OrganizationID: ORG,
        WindowID: id(21),
        Slug: 'prod-weekdays',
        Kind: 'Allow',
        Scope: 'Stage',
        SpaceID: BASE,
        ChangeWorkflowID: id(9),
        Stage: 'prod',
        Cron: '0 9 * * 1-4',
        Duration: '6h',
        TimeZone: 'Europe/Berlin',
        Blocks: ['promote'],
        OverrideApprovals: 2,
        Reason: 'prod changes while the on-call team is in',
        OwnerID: USER,
      },
    },
  },
  {
    meaning: 'A deploy window was deleted by its owner or an Admin: what it covered no longer waits for it.',
    event: {
      source: SOURCE,
      detailType: DetailType.WindowDeleted,
      detail: {
        EventID: id(22),
        OrganizationID: ORG,
        WindowID: id(23),
        Slug: 'year-end-freeze',
        Kind: 'Deny',
        Scope: 'WhereSpace',
        WhereSpace: "Labels.Environment = 'prod'",
        Start: '2026-12-19T00:00:00.000Z',
        End: '2027-01-04T00:00:00.000Z',
        Blocks: ['promote', 'demote'],
        OverrideApprovals: 0,
        Reason: 'year-end change freeze',
        OwnerID: USER,
        DeletedBy: USER,
      },
    },
  },
  {
    meaning:
      "Someone approved forcing a ChangeOrder through a window that asks for override approvals; a promotion with --force counts it when it is not the forcer's own.",
    event: {
      source: SOURCE,
      detailType: DetailType.WindowOverrideApproved,
      detail: {
        EventID: id(24),
        OrganizationID: ORG,
        ChangeOrderID: CO,
        Slug: 'release-v452',
        SpaceID: BASE,
        WindowID: id(21),
        WindowSlug: 'prod-weekdays',
        UserID: USER,
        Reason: 'sev1: the checkout fix cannot wait until Monday',
      },
    },
  },
  {
    meaning:
      "A Space of a Stage with a Recall reported, for the change's Release, a status the Stage recalls on within its Within of taking the change: the ChangeOrder is frozen by a hold named after it (owner baton), and with Demote taken back out of every Space that took it.",
    event: {
      source: SOURCE,
      detailType: DetailType.ChangeOrderRecalled,
      detail: {
        EventID: id(25),
        OrganizationID: ORG,
        ChangeOrderID: CO,
        Slug: 'release-v452',
        SpaceID: BASE,
        Stage: 'canary',
        RecalledSpaceID: id(26),
        RecalledSpaceSlug: 'acme-prod-euw1',
        ReleaseID: id(27),
        ReleaseNum: 2,
        Report: {
          Sync: 'Unknown',
          Health: 'Degraded',
          Operation: 'Failed',
          Reporter: 'flux',
          Message: "Health check failed after 2m0s: timeout waiting for: [Deployment/acme/api status: 'InProgress']",
          ObservedAt: '2026-12-03T10:12:02Z',
        },
        Matched: 'Degraded',
        TakenAt: '2026-12-03T10:00:00.000Z',
        RecalledAt: '2026-12-03T10:12:03.000Z',
        Within: '30m',
        Hold: 'recall-release-v452',
        Demote: true,
      },
    },
  },
];
