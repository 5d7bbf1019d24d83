import { systemDeps, type Deps } from '../lib/ports/deps.ts';
import { EventBridgeBus } from '../lib/events/bus.ts';
import { dynamoStore } from '../lib/store/store.ts';
import { dynamoClient } from '../lib/store/table.ts';
import { powertoolsTelemetry, tracer } from './observability.ts';
import { SqsJobQueue } from '../lib/events/job-queue.ts';
import { DEFAULT_JOB_THRESHOLD } from '../lib/changes/jobs.ts';

let deps: Deps | undefined;

/** The handlers' side effects, built once per Lambda container from its environment (TABLE_NAME, BUS_NAME), every AWS call traced. */
export function lambdaDeps(): Deps {
  if (!deps) {
    const table = process.env.TABLE_NAME;
    const bus = process.env.BUS_NAME;
    if (!table || !bus) throw new Error('TABLE_NAME and BUS_NAME must be set');
    const eventBridge = new EventBridgeBus(bus);
    tracer.captureAWSv3Client(eventBridge.client);
    const queueUrl = process.env.JOB_QUEUE_URL;
    const queue = queueUrl ? new SqsJobQueue(queueUrl) : undefined;
    if (queue) tracer.captureAWSv3Client(queue.client);
    deps = {
      ...systemDeps(dynamoStore(tracer.captureAWSv3Client(dynamoClient()), table), eventBridge),
      telemetry: powertoolsTelemetry,
      // Without a queue (a function that starts no job) every request runs whole.
      ...(queue
        ? { jobs: { queue, thresholdSpaces: Number(process.env.BATON_JOB_THRESHOLD ?? DEFAULT_JOB_THRESHOLD) } }
        : {}),
    };
  }
  return deps;
}
