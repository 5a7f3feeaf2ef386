import { defineConfig } from 'vitest/config';

// `pnpm test` at the root names a directory for every package's JSON report, to print the totals.
const reportDir = process.env.IDGATE_TEST_REPORT_DIR;

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    reporters:
      reportDir === undefined
        ? ['default']
        : ['default', ['json', { outputFile: `${reportDir}/runtimes.json` }]],
    testTimeout: 120_000,
    hookTimeout: 60_000,
  },
});
