/** Each Lambda's memory (MB), as the stack configures it: the bench prices a rollout's GB-seconds with these. */
export const FUNCTION_MEMORY_MB = {
  Api: 1024,
  Authorizer: 256,
  LiveStatus: 512,
  Reevaluate: 512,
  Notify: 256,
  BlockedSweep: 512,
  OutboxPublisher: 256,
  JobWorker: 1024,
} as const;
