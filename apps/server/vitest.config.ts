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
        : ['default', ['json', { outputFile: `${reportDir}/server.json` }]],
    // A run directory for every server's log and audit events, scanned for secrets at the end.
    globalSetup: ['test/global-setup.ts'],
    setupFiles: ['test/helpers/no-leftover-processes.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Test files run side by side: each one makes its own databases (a fresh SQLite file, a
    // PostgreSQL database of its own on the shared server: helpers/databases.ts), its own temp
    // directories and listens on ports the system picks. Each runs in a worker process (forks), one
    // file at a time, which the leftover-process check relies on. Two at a time suits CI's 2 CPUs:
    // many files wait on child processes (idgate serve, slapd, Chromium) as much as they compute.
    pool: 'forks',
    maxWorkers: 2,
    // A worker's process runs its files one after another with the modules it has loaded kept
    // (about 200 s less importing across the suite). Files restore what they change (environment
    // variables, fake timers) and stop what they start; the setup file still checks after each file.
    isolate: false,
  },
});
