import { readFileSync } from 'node:fs';
import { defineConfig } from 'vitest/config';

/** cub run in-process by the tests reports the version its bundle would (esbuild defines the same). */
const { version } = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')) as { version: string };

export default defineConfig({
  define: { CUB_VERSION: JSON.stringify(version) },
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    // A hang guard, not a speed check: a CLI scenario runs dozens of cub processes and server round trips, tens of seconds on a busy 2-core machine.
    testTimeout: 120000,
    hookTimeout: 60000,
    fileParallelism: true,
    maxWorkers: 2,
    // Test files share their worker's process (each still makes its own table and server): loading the code
    // once per worker, not once per file, was a quarter of the suite's time. What a file changes of the
    // process is put back: environment variables set with vi.stubEnv are restored after each test, and mocks.
    isolate: false,
    unstubEnvs: true,
    restoreMocks: true,
    reporters: ['default', './test/support/summary-reporter.ts'],
  },
});
