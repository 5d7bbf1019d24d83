/**
 * The Stage consumer (the bus's STAGE_RULE; on AWS functions/reevaluate.ts): a Release's live status changed,
 * or an attestation was recorded or revoked, in a Space: each ChangeOrder in flight that reached it is first
 * checked for a recall (a live-status change only: recall.ts), then its Stage re-evaluated (reevaluate.ts).
 */
import type { Deps } from '../ports/deps.ts';
import type { ChangeDeps } from './ports.ts';
import {
  DetailType,
  type BatonEvent,
  AttestationEventDetail,
  ReleaseLiveStatusChangedDetail,
  STAGE_RULE,
} from '../events/contracts.ts';
import { onceFor } from '../events/outbox.ts';
import { drop, type Outcome } from '../releases/deploy-events.ts';
import { reevaluateFor } from './reevaluate.ts';
import { recallIfReported } from './recall.ts';

/** The Stage re-evaluation consumer: a Release's live status changed, so the ChangeOrders its Space took may advance. */
export async function consumeLiveStatusChanged(deps: ChangeDeps, event: BatonEvent): Promise<Outcome> {
  const d = ReleaseLiveStatusChangedDetail.safeParse(event.detail);
  if (!d.success) return drop('malformed live status event', event);
  const caller = { OrganizationID: d.data.OrganizationID, UserID: 'baton' };
  await reevaluateFor(deps, caller, d.data.SpaceID, (co, progress) =>
    recallIfReported(deps, caller, co, progress, d.data),
  );
  return { applied: true, ReleaseID: d.data.ReleaseID };
}

/** The same re-evaluation after an attestation is recorded or revoked in a Space. */
export async function consumeAttestationEvent(deps: ChangeDeps, event: BatonEvent): Promise<Outcome> {
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
