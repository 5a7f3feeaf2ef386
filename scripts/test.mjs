#!/usr/bin/env node
// `pnpm test`: every package's tests through turbo, then one line of totals across all of them
// (`tests: N passed, N failed, N skipped`), read from the JSON report each vitest run writes into a
// directory this script names (IDGATE_TEST_REPORT_DIR, see the packages' vitest.config.ts).
// Arguments go to `turbo run test` (e.g. `pnpm test --filter @idgate/core`).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const started = performance.now();
const reportDir = mkdtempSync(join(tmpdir(), 'idgate-test-reports-'));
const turbo = spawnSync('pnpm', ['exec', 'turbo', 'run', 'test', ...process.argv.slice(2)], {
  stdio: 'inherit',
  env: { ...process.env, IDGATE_TEST_REPORT_DIR: reportDir },
});

const totals = { passed: 0, failed: 0, skipped: 0 };
const packages = [];
for (const file of readdirSync(reportDir).sort()) {
  const report = JSON.parse(readFileSync(join(reportDir, file), 'utf8'));
  const skipped = report.numPendingTests + report.numTodoTests;
  totals.passed += report.numPassedTests;
  totals.failed += report.numFailedTests;
  totals.skipped += skipped;
  // A file that fails before its tests run (an import error, a failing beforeAll) counts no test.
  const brokenFiles = report.testResults.filter(
    (result) => result.status === 'failed' && result.assertionResults.every((a) => a.status !== 'failed'),
  ).length;
  packages.push(
    `  ${file.replace(/\.json$/, '')}: ${report.numPassedTests} passed, ${report.numFailedTests} failed, ` +
      `${skipped} skipped${brokenFiles > 0 ? `, ${brokenFiles} test files failed to run` : ''}`,
  );
  if (brokenFiles > 0) totals.failed += brokenFiles;
}
rmSync(reportDir, { recursive: true, force: true });

const seconds = (performance.now() - started) / 1000;
const wall = `${Math.floor(seconds / 60)} min ${Math.round(seconds % 60)} s`;
console.log(`\n${packages.join('\n')}`);
console.log(
  `wall time: ${wall}${turbo.status === 0 ? '' : ` (turbo exited with ${turbo.status ?? turbo.signal})`}`,
);
console.log(`tests: ${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped`);
process.exit(turbo.status ?? 1);
