import { appendFileSync, closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';

/**
 * The run directory the global setup (`test/global-setup.ts`) made for this test run: every
 * server the helpers build writes its log and its audit JSON-lines file under it, and every
 * secret the run creates is registered in it, so that the teardown can check that no log line and
 * no audit event holds one. Unset when the tests run without that setup: then nothing is recorded.
 */
export const RUN_DIRECTORY_ENV = 'IDGATE_TEST_RUN_DIR';

const TEST_ROOT = fileURLToPath(new URL('..', import.meta.url));

function runDirectory(): string | undefined {
  const dir = process.env[RUN_DIRECTORY_ENV];
  return dir === undefined || dir === '' ? undefined : dir;
}

/** What a registered secret is, named in the scan's findings instead of its value. */
export type SecretKind =
  | 'password'
  | 'client secret'
  | 'API key'
  | 'server secret'
  | 'access_token'
  | 'refresh_token'
  | 'id_token'
  | 'device_code'
  | 'authorization code';

const registered = new Set<string>();

/**
 * Registers secrets the run made (or was given), for the scan at the end of the run. Values
 * shorter than 8 characters are not worth scanning for (they match ordinary words) and are
 * skipped by the scan.
 */
export function registerSecret(kind: SecretKind, ...values: Array<string | undefined>): void {
  const dir = runDirectory();
  if (dir === undefined) return;
  const lines = values
    .filter((value): value is string => value !== undefined && value !== '' && !registered.has(value))
    .map((value) => {
      registered.add(value);
      return `${JSON.stringify([kind, value])}\n`;
    });
  if (lines.length === 0) return;
  mkdirSync(join(dir, 'secrets'), { recursive: true });
  appendFileSync(join(dir, 'secrets', `${process.pid}.jsonl`), lines.join(''), { mode: 0o600 });
}

/** Secret-bearing fields of JSON responses (token endpoint, device authorization, admin API). */
const RESPONSE_SECRETS: Record<string, SecretKind> = {
  access_token: 'access_token',
  refresh_token: 'refresh_token',
  id_token: 'id_token',
  device_code: 'device_code',
  clientSecret: 'client secret',
  client_secret: 'client secret',
  key: 'API key',
};

/** Registers what a JSON response body hands out (tokens, client secrets, API keys). */
export function registerResponseSecrets(body: unknown): void {
  if (typeof body !== 'object' || body === null) return;
  for (const [field, kind] of Object.entries(RESPONSE_SECRETS)) {
    const value = (body as Record<string, unknown>)[field];
    if (typeof value !== 'string' || (kind === 'API key' && !value.startsWith('idg_'))) continue;
    registerSecret(kind, value);
  }
}

let opened = 0;

/**
 * Where a server built by the helpers writes: its log lines and its audit events, one file each
 * for this server alone (no two writers share a file). Named after the test file that built it.
 */
export interface RunOutput {
  /** The audit JSON-lines file (`audit.log`). */
  auditFile: string;
  /** Appends log text (whole lines) to this server's log file. */
  log(text: string): void;
  /** The log file's path (a child process can write it itself). */
  logFile: string;
  close(): void;
}

export function openRunOutput(): RunOutput | undefined {
  const dir = runDirectory();
  if (dir === undefined) return undefined;
  const testPath = expect.getState().testPath;
  const label = testPath === undefined ? 'unknown' : relative(TEST_ROOT, testPath).split(sep).join('~');
  const name = `${label}.${process.pid}.${++opened}`;
  mkdirSync(join(dir, 'logs'), { recursive: true });
  mkdirSync(join(dir, 'audit'), { recursive: true });
  const logFile = join(dir, 'logs', `${name}.log`);
  let fd: number | undefined;
  return {
    auditFile: join(dir, 'audit', `${name}.jsonl`),
    logFile,
    log(text) {
      fd ??= openSync(logFile, 'a', 0o600);
      writeSync(fd, text);
    },
    close() {
      if (fd !== undefined) closeSync(fd);
      fd = undefined;
    },
  };
}
