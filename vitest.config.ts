import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    // A hang guard, not a speed check: a CLI scenario runs dozens of cub processes and server round trips, tens of seconds on a busy 2-core machine.
    testTimeout: 120000,
    hookTimeout: 60000,
    fileParallelism: true,
    maxWorkers: 2,
    reporters: ['default', './test/support/summary-reporter.ts'],
  },
});
