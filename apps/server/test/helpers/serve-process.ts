import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { closeSync, existsSync, openSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { stopWhenTestEnds } from './child-processes.js';
import { openRunOutput, registerSecret } from './run-record.js';

/** The built CLI (`pnpm build` first). */
export const BIN = fileURLToPath(new URL('../../dist/bin.js', import.meta.url));

/** Polls `check` until it is true; answers how long that took, or fails after `limitMs`. */
export async function within(limitMs: number, check: () => Promise<boolean>): Promise<number> {
  const start = performance.now();
  while (performance.now() - start < limitMs) {
    if (await check()) return performance.now() - start;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`not within ${limitMs} ms`);
}

/** What `idgate init --json` prints: the admin API key, the admin user and the first client. */
export interface InitCredentials {
  apiKey: string;
  admin: { username: string; password: string };
  client: { clientId: string; clientSecret: string };
}

/**
 * Runs `idgate init --json` with `env` (the database of the servers to start) and answers what it
 * printed, each secret registered for the run's secret scan.
 */
export async function initDatabase(env: Record<string, string | undefined>): Promise<InitCredentials> {
  const { stdout } = await promisify(execFile)(process.execPath, [BIN, 'init', '--json'], { env });
  const creds = JSON.parse(stdout) as InitCredentials;
  registerSecret('API key', creds.apiKey);
  registerSecret('password', creds.admin.password);
  registerSecret('client secret', creds.client.clientSecret);
  return creds;
}

/** A real `idgate serve` child process listening on 127.0.0.1. */
export interface ServeProcess {
  /** `http://127.0.0.1:<port>` */
  url: string;
  process: ChildProcess;
  /** SIGTERM, and waits for it to exit. */
  stop(): Promise<void>;
}

/**
 * Starts `node dist/bin.js serve` with `env` (and nothing of the caller's environment) on `port`
 * and waits until `/readyz` answers 200. In a run with a run directory (`run-record.ts`), its log
 * (stdout and stderr) and its audit JSON-lines file (unless `env` sets `IDGATE_AUDIT_LOG`) go to
 * files of this process's own there, for the secret scan at the end of the run. Started in a test,
 * it is stopped when the test ends, passed or failed; started in a `beforeAll`, the file's
 * `afterAll` stops it.
 */
export async function startServeProcess(
  env: Record<string, string | undefined>,
  port: number,
  options: { readyWithinMs?: number } = {},
): Promise<ServeProcess> {
  if (!existsSync(BIN)) throw new Error('dist/bin.js is missing: run `pnpm build` first');
  const output = openRunOutput();
  const logFd = output === undefined ? undefined : openSync(output.logFile, 'a', 0o600);
  const child = spawn(process.execPath, [BIN, 'serve'], {
    env: {
      ...(output === undefined ? {} : { IDGATE_AUDIT_LOG: output.auditFile }),
      ...env,
      IDGATE_PORT: String(port),
    },
    stdio: logFd === undefined ? 'ignore' : ['ignore', logFd, logFd],
  });
  // The child has its own copy of the descriptor.
  if (logFd !== undefined) closeSync(logFd);
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  stopWhenTestEnds(stop);
  try {
    await within(
      options.readyWithinMs ?? 20_000,
      async () => (await fetch(`${url}/readyz`).catch(() => undefined))?.status === 200,
    );
  } catch (error) {
    await stop();
    throw error;
  }
  return { url, process: child, stop };
}

/**
 * Starts one `idgate serve` per port at once ({@link startServeProcess}); if any fails to become
 * ready, stops the others and fails.
 */
export async function startServeProcesses(
  env: Record<string, string | undefined>,
  ports: number[],
  options: { readyWithinMs?: number } = {},
): Promise<ServeProcess[]> {
  const started = await Promise.allSettled(ports.map((port) => startServeProcess(env, port, options)));
  const failed = started.find((result) => result.status === 'rejected');
  if (failed === undefined)
    return started.map((result) => (result as PromiseFulfilledResult<ServeProcess>).value);
  await Promise.all(
    started.map((result) => (result.status === 'fulfilled' ? result.value.stop() : undefined)),
  );
  throw failed.reason;
}
