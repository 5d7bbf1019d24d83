import { consumeStageEvent } from './stage-events.ts';
import { NOTIFY_RULE, STAGE_RULE, type BatonEvent } from '../events/contracts.ts';
import { consumeNotifyEvent } from './notifications.ts';
import { consumeDeployToolEvent, type Outcome } from '../releases/deploy-events.ts';
import type { Deps } from '../ports/deps.ts';

/** Every consumer of Baton's bus, by the detail type it takes (the rules in lib/events route each there). */
export async function consumeEvent(deps: Deps, event: BatonEvent): Promise<Outcome> {
  if (STAGE_RULE.detailType.includes(event.detailType)) return consumeStageEvent(deps, event);
  if (NOTIFY_RULE.detailType.includes(event.detailType)) return consumeNotifyEvent(deps, event);
  return consumeDeployToolEvent(deps, event);
}
