import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { beforeAll, beforeEach, describe, expect, it, onTestFinished } from 'vitest';
import { endsWithTest } from '../helpers/child-processes.js';
import { freePort } from '../helpers/server.js';
import { assertBuilt, BIN, cliEnv, envFor, lines, run, tempSqlite } from './support.js';

beforeAll(assertBuilt);

let db: Awaited<ReturnType<typeof tempSqlite>>;
beforeEach(async () => {
  const fresh = await tempSqlite();
  db = fresh;
  // After the server a test started is stopped (finish hooks run last registered first).
  onTestFinished(() => fresh.remove());
});

async function waitForHealth(url: string, deadline: number): Promise<Response> {
  for (;;) {
    try {
      return await fetch(url);
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

describe('idgate serve', () => {
  it('answers /healthz and exits 0 on SIGTERM within a few seconds', async () => {
    const port = await freePort();
    const spawned = endsWithTest(
      spawn(process.execPath, [BIN, 'serve'], {
        env: cliEnv(
          envFor(db.url, { IDGATE_HOST: '127.0.0.1', IDGATE_PORT: String(port), IDGATE_LOG_LEVEL: 'warn' }),
        ),
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    let stderr = '';
    spawned.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    spawned.stdout?.resume();
    const closed = once(spawned, 'close') as Promise<[number | null, NodeJS.Signals | null]>;

    const response = await waitForHealth(`http://127.0.0.1:${port}/healthz`, Date.now() + 15_000);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ok' });
    expect(spawned.exitCode).toBeNull();

    const signalled = Date.now();
    spawned.kill('SIGTERM');
    const [code, signal] = await closed;
    expect({ code, signal, stderr }).toEqual({ code: 0, signal: null, stderr: '' });
    expect(Date.now() - signalled).toBeLessThan(5_000);
  });

  it('fails with one line when the port is taken', async () => {
    const blocker: Server = createServer();
    blocker.listen(0, '127.0.0.1');
    await once(blocker, 'listening');
    try {
      const address = blocker.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      const result = await run(['serve'], {
        env: envFor(db.url, {
          IDGATE_HOST: '127.0.0.1',
          IDGATE_PORT: String(port),
          IDGATE_LOG_LEVEL: 'silent',
        }),
      });
      expect(result.code).toBe(1);
      expect(lines(result.stderr)).toEqual([
        `idgate: listen EADDRINUSE: address already in use 127.0.0.1:${port}`,
      ]);
    } finally {
      blocker.close();
    }
  });
});

describe('idgate serve says what to do next', () => {
  /** Starts `idgate serve` on `db` (through `wrap`, e.g. a terminal) and answers its output once it is ready. */
  async function outputOfServe(
    wrap?: (command: string[]) => string[],
    extraEnv: Record<string, string> = {},
  ): Promise<{ stdout: string; stderr: string }> {
    const port = await freePort();
    const command = [process.execPath, BIN, 'serve'];
    const [file, ...args] = wrap === undefined ? command : wrap(command);
    const spawned = endsWithTest(
      spawn(file as string, args, {
        env: cliEnv(envFor(db.url, { IDGATE_HOST: '127.0.0.1', IDGATE_PORT: String(port), ...extraEnv })),
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    const output = { stdout: '', stderr: '' };
    spawned.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      output.stdout += chunk;
    });
    spawned.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      output.stderr += chunk;
    });
    expect((await waitForHealth(`http://127.0.0.1:${port}/readyz`, Date.now() + 15_000)).status).toBe(200);
    // The banner and the log line are written right after listening: wait for the last of them.
    const deadline = Date.now() + 10_000;
    while (!/idle compaction|Logs follow/.test(output.stdout + output.stderr) && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50));
    await new Promise((resolve) => setTimeout(resolve, 200));
    return output;
  }
  const logMessages = (stdout: string) =>
    lines(stdout).map((line) => (JSON.parse(line) as { msg: string }).msg);

  it('warns at start about an IDGATE_ variable it does not read, naming the one meant', async () => {
    const { stdout } = await outputOfServe(undefined, { IDGATE_PROT: '9000' });
    expect(logMessages(stdout)).toContain(
      'IDGATE_PROT is not a setting idgate reads (did you mean IDGATE_PORT?); it is ignored',
    );
  });

  it('logs the next step on an empty database, and not once it is initialized; no banner without a terminal', async () => {
    const empty = await outputOfServe();
    expect(logMessages(empty.stdout)).toContain(
      'the database holds no users, clients or API keys yet: run `idgate init` (`pnpm -s idgate init` in a checkout) for the first admin user, API key and client, or `pnpm demo` for a demo user and an example application',
    );
    expect(empty.stderr).toBe('');
    expect((await run(['init'], { env: envFor(db.url) })).code).toBe(0);
    const initialized = await outputOfServe();
    expect(logMessages(initialized.stdout).filter((message) => message.includes('idgate init'))).toEqual([]);
  });

  it.skipIf(!existsSync('/usr/bin/script'))(
    'prints where to go and what to run to a person at a terminal',
    async () => {
      // util-linux's script(1) runs the server on a pseudo-terminal, as a person's shell would.
      const { stdout } = await outputOfServe((command) => [
        '/usr/bin/script',
        '-qec',
        command.join(' '),
        '/dev/null',
      ]);
      const text = stdout.replace(/\r/g, '');
      expect(text).toMatch(/^idgate is listening on http:\/\/127\.0\.0\.1:\d+$/m);
      // Not set, the issuer follows the port the server listens on.
      expect(text).toMatch(/^ {2}issuer: {7}http:\/\/localhost:(\d+)\/oauth$/m);
      expect(text).toContain(
        `  issuer:       http://localhost:${/listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(text)?.[1]}/oauth\n`,
      );
      expect(text).toContain('Next: the database is empty. In another terminal run\n  pnpm -s idgate init');
    },
  );
});
