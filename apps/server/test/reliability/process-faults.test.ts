import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endsWithTest } from '../helpers/child-processes.js';
import { type TestDatabase, testDatabaseUrls } from '../helpers/databases.js';
import { freePort } from '../helpers/server.js';

// What a process manager does to idgate: SIGTERM under load (a rolling update) and SIGKILL in the
// middle of writes (an OOM kill, a node lost). Real server processes, real HTTP, both databases.

const BIN = fileURLToPath(new URL('../../dist/bin.js', import.meta.url));
const SECRET = 'process-fault-secret-0123456789abcdefghij';
const CHAINS = 6;

interface Server {
  url: string;
  child: ChildProcess;
  exited: Promise<[number | null, NodeJS.Signals | null]>;
  stderr: () => string;
}

/** Polls `check` until it is true, or fails after `limitMs`. */
async function until(limitMs: number, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`not within ${limitMs} ms`);
}

describe.each(testDatabaseUrls())('server process faults on $name', (kind) => {
  let database: TestDatabase;
  let env: NodeJS.ProcessEnv;
  let port: number;
  let apiKey: string;
  let client: { clientId: string; clientSecret: string };
  let admin: { username: string; password: string };

  const cli = async (...args: string[]) =>
    (await promisify(execFile)(process.execPath, [BIN, ...args], { env })).stdout;

  /** An `idgate serve` on `port`, killed when the test ends if the test has not stopped it. */
  async function start(): Promise<Server> {
    const child = endsWithTest(
      spawn(process.execPath, [BIN, 'serve'], { env, stdio: ['ignore', 'ignore', 'pipe'] }),
    );
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
    const url = `http://127.0.0.1:${port}`;
    await until(15_000, async () => (await fetch(`${url}/readyz`)).status === 200);
    return { url, child, exited, stderr: () => stderr };
  }

  beforeAll(async () => {
    if (!existsSync(BIN)) throw new Error('dist/bin.js is missing: run `pnpm build` first');
    database = await kind.create();
    port = await freePort();
    env = {
      PATH: process.env.PATH,
      IDGATE_DATABASE_URL: database.url,
      IDGATE_SECRET: SECRET,
      IDGATE_ISSUER: `http://127.0.0.1:${port}/oauth`,
      IDGATE_HOST: '127.0.0.1',
      IDGATE_PORT: String(port),
      IDGATE_LOG_LEVEL: 'error',
    };
    const init = JSON.parse(await cli('init', '--json')) as {
      apiKey: string;
      admin: { username: string; password: string };
    };
    apiKey = init.apiKey;
    admin = init.admin;
    const added = JSON.parse(
      await cli(
        'clients',
        'add',
        '--name',
        'load',
        '--trusted',
        '--grant',
        'password',
        'refresh_token',
        '--scope',
        'openid',
        'offline_access',
        '--json',
      ),
    ) as { clientId: string; clientSecret: string };
    client = { clientId: added.clientId, clientSecret: added.clientSecret };
  }, 60_000);

  afterAll(async () => {
    await database?.drop();
  });

  const basic = () => `Basic ${btoa(`${client.clientId}:${client.clientSecret}`)}`;
  const tokenRequest = (url: string, form: Record<string, string>) =>
    fetch(`${url}/oauth/token`, {
      method: 'POST',
      headers: { authorization: basic(), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form),
    });
  const passwordGrant = async (url: string) => {
    const response = await tokenRequest(url, {
      grant_type: 'password',
      username: admin.username,
      password: admin.password,
      scope: 'openid offline_access',
    });
    expect(response.status).toBe(200);
    return (await response.json()) as { access_token: string; refresh_token: string };
  };
  const review = (url: string, token: string) =>
    fetch(`${url}/oauth/authenticate`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } }),
    });

  /**
   * Load until `stop`: each chain rotates its refresh token over and over, and reviews run beside
   * them. Answers every status seen, and per chain the last refresh token an answer gave (the
   * client's view: it holds that one) and whether a rotation was still waiting for its answer.
   */
  function load(url: string, accessToken: string, refreshTokens: string[]) {
    let stopped = false;
    const statuses: number[] = [];
    const chains = refreshTokens.map((token) => ({ held: token, waiting: false, rotations: 0 }));
    const rotate = async (chain: (typeof chains)[number]) => {
      while (!stopped) {
        chain.waiting = true;
        let response: Response;
        try {
          response = await tokenRequest(url, { grant_type: 'refresh_token', refresh_token: chain.held });
        } catch {
          return; // the connection went: the answer, if any, is lost
        }
        statuses.push(response.status);
        if (response.status !== 200) return;
        chain.held = ((await response.json()) as { refresh_token: string }).refresh_token;
        chain.waiting = false;
        chain.rotations++;
      }
    };
    const reviews = async () => {
      while (!stopped) {
        try {
          statuses.push((await review(url, accessToken)).status);
        } catch {
          return;
        }
      }
    };
    const running = Promise.all([...chains.map(rotate), reviews(), reviews()]);
    return {
      statuses,
      chains,
      async stop() {
        stopped = true;
        await running;
      },
    };
  }

  it('SIGTERM under load: answers what it accepted, 503 to the rest, never a 500, exits 0; nothing written is lost', async () => {
    const server = await start();
    const { access_token } = await passwordGrant(server.url);
    const chains = await Promise.all(Array.from({ length: CHAINS }, () => passwordGrant(server.url)));
    const running = load(
      server.url,
      access_token,
      chains.map((c) => c.refresh_token),
    );
    await until(10_000, async () => running.chains.every((c) => c.rotations >= 3));
    const signalled = Date.now();
    server.child.kill('SIGTERM');
    const [code, signal] = await server.exited;
    const shutdownMs = Date.now() - signalled;
    await running.stop();

    expect({ code, signal, stderr: server.stderr() }).toEqual({ code: 0, signal: null, stderr: '' });
    expect(shutdownMs).toBeLessThan(10_000);
    expect(running.statuses.length).toBeGreaterThan(CHAINS * 3);
    expect(running.statuses.filter((status) => status !== 200 && status !== 503)).toEqual([]);

    // Every rotation that was answered stands: the token the client holds works after a restart,
    // unless its own rotation was cut off (then the server may have used it, and reuse is refused).
    const restarted = await start();
    try {
      for (const chain of running.chains) {
        const response = await tokenRequest(restarted.url, {
          grant_type: 'refresh_token',
          refresh_token: chain.held,
        });
        if (!chain.waiting) expect(response.status).toBe(200);
        else expect([200, 400]).toContain(response.status);
      }
      expect((await review(restarted.url, access_token)).status).toBe(200);
    } finally {
      restarted.child.kill('SIGTERM');
      await restarted.exited;
    }
  }, 60_000);

  it('SIGKILL during writes: the database stays whole, every answered write is there after a restart', async () => {
    const server = await start();
    const { access_token } = await passwordGrant(server.url);
    // Issued and answered before the kill, never used: each must still work afterwards.
    const untouched = await Promise.all(Array.from({ length: CHAINS }, () => passwordGrant(server.url)));
    const chains = await Promise.all(Array.from({ length: CHAINS }, () => passwordGrant(server.url)));
    const running = load(
      server.url,
      access_token,
      chains.map((c) => c.refresh_token),
    );
    await until(10_000, async () => running.chains.every((c) => c.rotations >= 5));
    server.child.kill('SIGKILL');
    const [, signal] = await server.exited;
    await running.stop();
    expect(signal).toBe('SIGKILL');
    expect(running.statuses.filter((status) => status !== 200)).toEqual([]);

    await expect(integrityProblems(database.url)).resolves.toEqual([]);
    const restarted = await start();
    try {
      for (const tokens of untouched) {
        const response = await tokenRequest(restarted.url, {
          grant_type: 'refresh_token',
          refresh_token: tokens.refresh_token,
        });
        expect(response.status).toBe(200);
      }
      for (const chain of running.chains) {
        const response = await tokenRequest(restarted.url, {
          grant_type: 'refresh_token',
          refresh_token: chain.held,
        });
        // The answer of the rotation in flight was lost: if the server had committed it, the held
        // token is a used one and its reuse is refused (the grant revoked), as RFC 9700 wants.
        if (!chain.waiting) expect(response.status).toBe(200);
        else expect([200, 400]).toContain(response.status);
      }
      expect((await review(restarted.url, access_token)).status).toBe(200);
    } finally {
      restarted.child.kill('SIGTERM');
      await restarted.exited;
    }
  }, 60_000);
});

/**
 * What is wrong with the database after a crash: SQLite's own integrity check, and on both
 * dialects refresh tokens without their grant (a rotation half written).
 */
async function integrityProblems(url: string): Promise<string[]> {
  const orphans =
    'select count(*) as n from refresh_tokens r left join grants g on g.id = r.grant_id where g.id is null';
  if (url.startsWith('sqlite:')) {
    const db = new Database(url.slice('sqlite:'.length));
    try {
      const checked = (db.pragma('integrity_check') as Array<{ integrity_check: string }>).map(
        (row) => row.integrity_check,
      );
      const { n } = db.prepare(orphans).get() as { n: number };
      return [
        ...checked.filter((line) => line !== 'ok'),
        ...(n > 0 ? [`${n} refresh tokens without a grant`] : []),
      ];
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string }>(orphans);
    const n = Number(rows[0]?.n ?? 0);
    return n > 0 ? [`${n} refresh tokens without a grant`] : [];
  } finally {
    await client.end();
  }
}
