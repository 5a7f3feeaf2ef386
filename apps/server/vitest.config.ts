import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'] } },
  test: {
    include: ['test/**/*.test.ts'],
    // A run directory for every server's log and audit events, scanned for secrets at the end.
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Storage tests share one PostgreSQL database: files run one at a time.
    fileParallelism: false,
  },
});
