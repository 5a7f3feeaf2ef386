import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { runCli } from '../../src/cli/program.js';
import { loadConfig } from '../../src/config.js';
import { openServices, type Services } from '../../src/services.js';
import { migrateToLatest, openDatabase } from '../../src/storage/index.js';
import { endsWithTest } from '../helpers/child-processes.js';
import { type TestDatabaseKind, testDatabaseUrls } from '../helpers/databases.js';

/** The compiled CLI the tests run as a child process. */
export const BIN = fileURLToPath(new URL('../../dist/bin.js', import.meta.url));

/** A configured secret, so the CLI does not generate one (and warn). */
export const SECRET = 'test-secret-0123456789-abcdefghijklmnop';

/** Fails the suite with a clear message when the CLI has not been built. */
export function assertBuilt(): void {
  if (!existsSync(BIN)) {
    throw new Error(
      `${BIN} is missing: run \`pnpm build\` (or \`npx tsc -b apps/server\`) before the CLI tests`,
    );
  }
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** The caller's environment without any IDGATE_* variable, plus `env`. */
export function cliEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const clean = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('IDGATE_')),
  );
  return { ...clean, ...env };
}

/**
 * Runs `node dist/bin.js ...args` to completion; `input` is written to its stdin (else stdin is
 * empty). A command still running when the test ends (it failed or timed out) is killed.
 */
export function run(
  args: string[],
  options: { env: Record<string, string>; input?: string; cwd?: string },
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = endsWithTest(
      spawn(process.execPath, [BIN, ...args], {
        env: cliEnv(options.env),
        cwd: options.cwd ?? tmpdir(),
        stdio: ['pipe', 'pipe', 'pipe'],
      }),
    );
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
    child.stdin.end(options.input ?? '');
  });
}

/** Runs `runCli` in this process with captured streams. */
export async function runInProcess(
  args: string[],
  options: { env: Record<string, string>; input?: string },
): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const sink = (append: (text: string) => void) =>
    new Writable({
      write(chunk: Buffer | string, _encoding, done) {
        append(chunk.toString());
        done();
      },
    });
  const stdin = new PassThrough();
  stdin.end(options.input ?? '');
  const code = await runCli(args, {
    stdout: sink((text) => {
      stdout += text;
    }),
    stderr: sink((text) => {
      stderr += text;
    }),
    stdin,
    env: options.env,
  });
  return { code, stdout, stderr };
}

/**
 * Applies idgate's migrations to the database at `url`, as `idgate migrate` does: commands other
 * than `serve`, `init` and `migrate` refuse a database idgate has not set up.
 */
export async function migrated(url: string): Promise<void> {
  const database = await openDatabase(url);
  try {
    await migrateToLatest(database);
  } finally {
    await database.close();
  }
}

/**
 * A fresh folder under the temp directory with a migrated SQLite database inside it (`fresh`: no
 * database file yet, as for `init`).
 */
export async function tempSqlite(options: { fresh?: boolean } = {}): Promise<{
  dir: string;
  file: string;
  url: string;
  remove(): Promise<void>;
}> {
  const dir = await mkdtemp(join(tmpdir(), 'idgate-cli-'));
  const file = join(dir, 'idgate.db');
  const url = `sqlite:${file}`;
  if (options.fresh !== true) await migrated(url);
  return { dir, file, url, remove: () => rm(dir, { recursive: true, force: true }) };
}

/** {@link testDatabaseUrls}, each database migrated before the CLI runs on it. */
export function cliDatabaseUrls(): TestDatabaseKind[] {
  return testDatabaseUrls().map((kind) => ({
    name: kind.name,
    async create() {
      const database = await kind.create();
      await migrated(database.url);
      return database;
    },
  }));
}

/** The environment for a CLI run against `url` with a configured secret. */
export function envFor(url: string, extra: Record<string, string> = {}): Record<string, string> {
  return { IDGATE_DATABASE_URL: url, IDGATE_SECRET: SECRET, ...extra };
}

/** Opens the same database the CLI used, to check what it stored; close it afterwards. */
export function openTestServices(url: string): Promise<Services> {
  const quiet = { warn() {}, info() {} };
  return openServices(loadConfig({ env: envFor(url) }), { logger: quiet });
}

/** Lines of an output, without the final newline. */
export function lines(text: string): string[] {
  return text.replace(/\n$/, '').split('\n');
}

/** stderr without the note the first command on a fresh database prints. */
export function errorLines(stderr: string): string[] {
  return lines(stderr).filter((line) => !line.startsWith('idgate: applied migrations:'));
}
