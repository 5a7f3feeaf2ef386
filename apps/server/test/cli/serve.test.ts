import { spawn } from 'node:child_process';
import { once } from 'node:events';
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
