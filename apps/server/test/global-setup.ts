import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { makeFixtureSigningKey } from './helpers/fixture-key.js';
import { TEST_SECRET } from './helpers/harness.js';
import { RUN_DIRECTORY_ENV } from './helpers/run-record.js';
import { scanRun } from './helpers/secret-scan.js';
import { CHROMIUM, provideTools, SLAPD } from './helpers/tools.js';

/**
 * Finds the browser and the LDAP server some tests drive, once for the run (`helpers/tools.ts`),
 * and makes the one signing key the servers of the run start with (`helpers/fixture-key.ts`).
 * Makes the run directory every test-built server writes its log and audit events into and every
 * registered secret is noted in (`helpers/run-record.ts`); after the last test file, scans it all
 * and fails the run on any secret or token-shaped string, naming the file and line. A clean run's
 * directory is removed; one with findings is kept for reading.
 */
export default async function setup(project: TestProject): Promise<() => void> {
  provideTools(project, [CHROMIUM, SLAPD]);
  project.provide('signingKey', await makeFixtureSigningKey(TEST_SECRET));
  const dir = mkdtempSync(join(tmpdir(), 'idgate-test-run-'));
  // Set before the workers start: they inherit it.
  process.env[RUN_DIRECTORY_ENV] = dir;
  return () => {
    const started = performance.now();
    const cpuBefore = process.cpuUsage();
    const scan = scanRun(dir);
    const cpu = process.cpuUsage(cpuBefore);
    const ms = Math.round(performance.now() - started);
    const cpuMs = Math.round((cpu.user + cpu.system) / 1000);
    console.log(
      `secret scan: ${scan.lines} lines (${scan.events} audit events) in ${scan.files} files, ` +
        `${scan.secrets} registered secrets, ${scan.findings.length} findings, ${ms} ms (${cpuMs} ms CPU)`,
    );
    if (scan.findings.length === 0) {
      if (process.env.IDGATE_TEST_KEEP_RUN_DIR === undefined) rmSync(dir, { recursive: true, force: true });
      else console.log(`the run directory is kept: ${dir}`);
      return;
    }
    const shown = scan.findings.slice(0, 50).map((f) => `  ${f.file}:${f.line}: ${f.what}`);
    if (scan.findings.length > shown.length)
      shown.push(`  … and ${scan.findings.length - shown.length} more`);
    // vitest reports an error thrown here but still exits 0: the exit code must say it too.
    process.exitCode = 1;
    throw new Error(
      `the run's logs or audit events hold secrets or broken events (kept in ${dir}):\n${shown.join('\n')}`,
    );
  };
}
