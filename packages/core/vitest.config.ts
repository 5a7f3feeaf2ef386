import { defineConfig } from 'vitest/config';

// `pnpm test` at the root names a directory for every package's JSON report, to print the totals.
const reportDir = process.env.IDGATE_TEST_REPORT_DIR;

export default defineConfig({
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'] } },
  test: {
    include: ['test/**/*.test.ts'],
    reporters:
      reportDir === undefined ? ['default'] : ['default', ['json', { outputFile: `${reportDir}/core.json` }]],
    setupFiles: ['./test/setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Files share a worker's loaded modules (half the time); none changes global state it keeps.
    isolate: false,
  },
});
