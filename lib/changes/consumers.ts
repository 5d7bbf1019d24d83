import {
  AttestationEventDetail,
  DetailType,
  ReleaseLiveStatusChangedDetail,
  STAGE_RULE,
  type BatonEvent,
} from '../events/contracts.ts';
import { onceFor } from '../events/outbox.ts';
import type { Deps } from '../ports/deps.ts';
import { consumeDeployToolEvent, drop, type Outcome } from '../releases/deploy-events.ts';
import { reevaluateFor } from './progress.ts';

/** The Stage re-evaluation consumer: a Release's live status changed, so the ChangeOrders its Space took may advance. */
export async function consumeLiveStatusChanged(deps: Deps, event: BatonEvent): Promise<Outcome> {
  const d = ReleaseLiveStatusChangedDetail.safeParse(event.detail);
  if (!d.success) return drop('malformed live status event', event);
  await reevaluateFor(deps, { OrganizationID: d.data.OrganizationID, UserID: 'baton' }, d.data.SpaceID);
  return { applied: true, ReleaseID: d.data.ReleaseID };
}

/** The same re-evaluation after an attestation is recorded or revoked in a Space. */
export async function consumeAttestationEvent(deps: Deps, event: BatonEvent): Promise<Outcome> {
  const d = AttestationEventDetail.safeParse(event.detail);
  if (!d.success) return drop('malformed attestation event', event);
  await reevaluateFor(deps, { OrganizationID: d.data.OrganizationID, UserID: 'baton' }, d.data.SpaceID);
  return { applied: true, ReleaseID: '' };
}

/** The Stage re-evaluation consumer: live-status and attestation events, each handled once (a redelivery is dropped by its EventID). */
export async function consumeStageEvent(deps: Deps, event: BatonEvent): Promise<Outcome> {
  let out: Outcome | undefined;
  await onceFor(deps, STAGE_RULE.name, event, async () => {
    out =
      event.detailType === DetailType.ReleaseLiveStatusChanged
        ? await consumeLiveStatusChanged(deps, event)
        : await consumeAttestationEvent(deps, event);
  });
  return out ?? drop('duplicate event', event);
}

/** Every consumer of Baton's bus, by the detail type it takes (the rules in lib/events route each there). */
export async function consumeEvent(deps: Deps, event: BatonEvent): Promise<Outcome> {
  if (STAGE_RULE.detailType.includes(event.detailType)) return consumeStageEvent(deps, event);
  return consumeDeployToolEvent(deps, event);
}
