import { AttestationEventDetail, DetailType, ReleaseLiveStatusChangedDetail, type BatonEvent } from '../events/contracts.ts';
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

/** Every consumer of Baton's bus, by the detail type it takes (the rules in lib/events route each there). */
export async function consumeEvent(deps: Deps, event: BatonEvent): Promise<Outcome> {
  if (event.detailType === DetailType.ReleaseLiveStatusChanged) return consumeLiveStatusChanged(deps, event);
  if (event.detailType === DetailType.AttestationRecorded || event.detailType === DetailType.AttestationRevoked) return consumeAttestationEvent(deps, event);
  return consumeDeployToolEvent(deps, event);
}
