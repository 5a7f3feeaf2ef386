import { defineConfig } from 'vitest/config';

// `pnpm test` at the root names a directory for every package's JSON report, to print the totals.
const reportDir = process.env.IDGATE_TEST_REPORT_DIR;

export default defineConfig({
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'] } },
  // integration tests spawn the built plugin (dist/bin.js) and real kubectl
  test: {
    include: ['test/**/*.test.ts'],
    reporters:
      reportDir === undefined
        ? ['default']
        : ['default', ['json', { outputFile: `${reportDir}/kubectl-idgate.json` }]],
    // Finds kubectl once for the run (IDGATE_TEST_KUBECTL, Debian's, PATH), or says once that its tests skip.
    globalSetup: ['test/global-setup.ts'],
    // Nothing a test file started (idgate serve, kubectl, the plugin) outlives it.
    setupFiles: ['../server/test/helpers/no-leftover-processes.ts'],
    testTimeout: 60_000,
    // Setting up a file starts idgate and runs its CLI several times: slow on a loaded machine.
    hookTimeout: 180_000,
    // Files share nothing (each has its own temp directory, issuer and ports): two at a time.
    pool: 'forks',
    maxWorkers: 2,
  },
});
