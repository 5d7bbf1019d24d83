import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import type { EventBus } from '../ports/deps.ts';
import type { BatonEvent, Rule } from './contracts.ts';

/** Delivers events to consumers in this process, by the same rules the CDK stack declares. */
export class InProcessBus implements EventBus {
  private readonly subscriptions: { rule: Rule; consumer: (e: BatonEvent) => Promise<void> }[] = [];
  /**
   * The events put, in order, when asked to keep them (tests read it); a server keeps none, so its
   * memory does not grow with what it has delivered.
   */
  readonly log: BatonEvent[] = [];
  constructor(private readonly keepLog = false) {}

  subscribe(rule: Rule, consumer: (e: BatonEvent) => Promise<void>): void {
    this.subscriptions.push({ rule, consumer });
  }

  async put(events: BatonEvent[]): Promise<void> {
    for (const e of events) {
      if (this.keepLog) this.log.push(e);
      for (const s of this.subscriptions) {
        if (!s.rule.source.includes(e.source) || !s.rule.detailType.includes(e.detailType)) continue;
        // Like EventBridge, a consumer's failure never reaches the producer.
        await s
          .consumer(e)
          .catch((err: unknown) => console.error(`consumer ${s.rule.name} failed on ${e.detailType}:`, err));
      }
    }
  }
}

/** Puts events on an EventBridge bus (honours AWS_ENDPOINT_URL). */
export class EventBridgeBus implements EventBus {
  readonly client = new EventBridgeClient({ endpoint: process.env.AWS_ENDPOINT_URL });
  constructor(private readonly busName: string) {}

  async put(events: BatonEvent[]): Promise<void> {
    for (let i = 0; i < events.length; i += 10) {
      const batch = events.slice(i, i + 10);
      const r = await this.client.send(
        new PutEventsCommand({
          Entries: batch.map((e) => ({
            EventBusName: this.busName,
            Source: e.source,
            DetailType: e.detailType,
            Detail: JSON.stringify(e.detail),
          })),
        }),
      );
      if (r.FailedEntryCount)
        throw new Error(
          `EventBridge refused ${r.FailedEntryCount} event(s): ${r.Entries?.find((x) => x.ErrorCode)?.ErrorMessage ?? ''}`,
        );
    }
  }
}
