import { defineConfig } from 'vitest/config';

// `pnpm test` at the root names a directory for every package's JSON report, to print the totals.
const reportDir = process.env.IDGATE_TEST_REPORT_DIR;

export default defineConfig({
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'] } },
  test: {
    include: ['test/**/*.test.ts'],
    reporters:
      reportDir === undefined
        ? ['default']
        : ['default', ['json', { outputFile: `${reportDir}/deploy.json` }]],
    // Finds helm and kubectl once for the run (apps/server/test/helpers/tools.ts).
    globalSetup: ['test/global-setup.ts'],
    setupFiles: ['../apps/server/test/helpers/no-leftover-processes.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
  },
});
