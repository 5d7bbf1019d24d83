import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 30000,
    hookTimeout: 60000,
    fileParallelism: true,
    maxWorkers: 2,
    reporters: ['default', './test/support/summary-reporter.ts'],
  },
});
