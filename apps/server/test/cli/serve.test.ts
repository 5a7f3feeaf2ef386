import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server } from 'node:net';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { assertBuilt, BIN, cliEnv, envFor, lines, run, tempSqlite } from './support.js';

beforeAll(assertBuilt);

let db: Awaited<ReturnType<typeof tempSqlite>>;
let child: ChildProcess | undefined;
beforeEach(async () => {
  db = await tempSqlite();
});
afterEach(async () => {
  if (child !== undefined && child.exitCode === null && child.signalCode === null) {
    child.kill('SIGKILL');
    await once(child, 'close');
  }
  child = undefined;
  await db.remove();
});

/** A port nothing listens on: bind port 0 on 127.0.0.1, note the port, close. */
async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  await once(server, 'close');
  if (typeof address !== 'object' || address === null) throw new Error('no port');
  return address.port;
}

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
    const spawned = spawn(process.execPath, [BIN, 'serve'], {
      env: cliEnv(
        envFor(db.url, { IDGATE_HOST: '127.0.0.1', IDGATE_PORT: String(port), IDGATE_LOG_LEVEL: 'warn' }),
      ),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = spawned;
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
