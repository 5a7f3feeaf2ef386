import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import {
  canRunThrowawayPostgres,
  startThrowawayPostgres,
  type ThrowawayPostgres,
} from '../helpers/throwaway-postgres.js';
import { type Answer, logged, outageViolations, spread, walkEveryRoute } from './outage-support.js';

// PostgreSQL taken away from a running idgate — stopped, frozen (SIGSTOP: sockets open, nothing
// answers), killed — on a cluster of the test's own (never the shared one). Every request that
// needs the database answers 503 with Retry-After within the timeouts, never 500 and never a hang;
// what is served from memory goes on being served; the service recovers on its own within a
// second of the database answering; each outage is two log lines.

// Short timeouts so the test is quick; the defaults are 5 s (connect), 10 s (statement), 12 s (query).
const TIMEOUTS = { connectTimeout: 1, statementTimeout: 1, queryTimeout: 1.5, idleInTransactionTimeout: 5 };
/** The longest a request may take while the database is away: connect + query timeout + margin. */
const LIMIT_MS = (TIMEOUTS.connectTimeout + TIMEOUTS.queryTimeout) * 1000 + 1500;
const USER = { username: 'olga', password: 'a sturdy pass phrase!' };

describe.skipIf(!canRunThrowawayPostgres())('PostgreSQL outages on a throwaway cluster', () => {
  let cluster: ThrowawayPostgres;
  let t: TestServer;
  let adminKey: string;
  let clientAuth: string;
  let accessToken: string;
  const figures: Record<string, unknown> = {};

  const call = (path: string, init: RequestInit = {}) =>
    fetch(`${t.baseUrl}${path}`, { redirect: 'manual', signal: AbortSignal.timeout(LIMIT_MS), ...init });
  const passwordGrant = () =>
    call('/oauth/token', {
      method: 'POST',
      headers: { authorization: clientAuth, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'password', ...USER, scope: 'openid' }),
    });
  const tokenReview = () =>
    call('/oauth/authenticate', {
      method: 'POST',
      headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenReview',
        spec: { token: accessToken },
      }),
    });
  const reviewed = async () =>
    ((await (await tokenReview()).json()) as { status: { authenticated: boolean } }).status.authenticated;
  const userinfo = () => call('/oauth/userinfo', { headers: { authorization: `Bearer ${accessToken}` } });
  const introspect = () =>
    call('/oauth/introspect', {
      method: 'POST',
      headers: { authorization: clientAuth, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: accessToken }),
    });
  const adminList = () =>
    call('/admin/v1/identity-providers', { headers: { authorization: `Bearer ${adminKey}` } });
  const credentials = () => ({ adminKey, clientAuth, accessToken, ...USER });
  /** The outage log lines since `mark()`: [went away, came back]. */
  let marked = [0, 0];
  const lines = () => [logged(t.logs, 'storage unavailable'), logged(t.logs, 'storage available again')];
  const mark = () => {
    marked = lines();
  };
  const sinceMark = () => lines().map((n, i) => n - (marked[i] ?? 0));

  /** When (performance.now()) `attempt` first succeeds, polling; fails after 10 s. */
  async function firstSuccess(attempt: () => Promise<boolean>): Promise<number> {
    const started = performance.now();
    while (performance.now() - started < 10_000) {
      if (await attempt().catch(() => false)) return performance.now();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error('no success within 10 s');
  }

  /** PostgreSQL itself answers a new connection (what idgate's recovery is measured from). */
  async function databaseAnswers(): Promise<boolean> {
    const client = new pg.Client({ connectionString: cluster.url, connectionTimeoutMillis: 1000 });
    client.on('error', () => {});
    try {
      await client.connect();
      await client.query('select 1');
      return true;
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  /**
   * How long after PostgreSQL answers new connections again a request that needs the database
   * succeeds (polling both from now), and how long after now.
   */
  async function recovery(): Promise<{ afterDatabaseMs: number; totalMs: number }> {
    const started = performance.now();
    const [database, app] = await Promise.all([
      firstSuccess(databaseAnswers),
      firstSuccess(async () => (await adminList()).status === 200),
    ]);
    return { afterDatabaseMs: Math.round(Math.max(0, app - database)), totalMs: Math.round(app - started) };
  }

  beforeAll(async () => {
    cluster = await startThrowawayPostgres();
    t = await startTestServer(
      { name: 'postgres', create: async () => ({ url: cluster.url, drop: async () => {} }) },
      { database: { url: cluster.url, ...TIMEOUTS } },
    );
    adminKey = await t.addApiKey(['admin', 'tokenreview']);
    await t.addUser(USER.username, USER.password);
    const client = await t.addClient({ grants: ['password', 'refresh_token'], trusted: true });
    clientAuth = `Basic ${btoa(`${client.clientId}:${client.clientSecret}`)}`;
    const granted = await passwordGrant();
    expect(granted.status).toBe(200);
    accessToken = ((await granted.json()) as { access_token: string }).access_token;
    // What the directory then holds: the reviewer's key, the user, the client, the token.
    expect(await reviewed()).toBe(true);
    expect((await userinfo()).status).toBe(200);
    expect((await introspect()).status).toBe(200);
    expect((await adminList()).status).toBe(200);
  }, 60_000);

  afterAll(async () => {
    cluster?.thaw();
    await t?.close().catch(() => undefined);
    await cluster?.destroy();
    console.log(`db-outage figures: ${JSON.stringify(figures)}`);
    if (process.env.OUTAGE_DEBUG) console.log(t.logs.filter((l) => /storage/.test(l)).join('\n'));
  });

  it('stopped: what needs the database answers 503 with Retry-After in its route’s format; memory keeps serving', async () => {
    mark();
    await cluster.stop();
    const grant = await passwordGrant();
    expect(grant.status).toBe(503);
    expect(grant.headers.get('retry-after')).toMatch(/^[0-9]+$/);
    expect(await grant.json()).toMatchObject({ error: 'temporarily_unavailable' });

    const admin = await adminList();
    expect(admin.status).toBe(503);
    expect(admin.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await admin.json()).toMatchObject({ status: 503, code: 'storage_unavailable' });
    expect(admin.headers.get('retry-after')).toMatch(/^[0-9]+$/);

    const page = await call('/oauth/authorize?client_id=x&response_type=code', {
      headers: { accept: 'text/html' },
    });
    expect(page.status).toBe(503);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('retry-after')).toMatch(/^[0-9]+$/);

    // Served from memory: reviews, userinfo and introspection of a known token; discovery; JWKS.
    expect(await reviewed()).toBe(true);
    expect((await userinfo()).status).toBe(200);
    expect(await (await introspect()).json()).toMatchObject({ active: true });
    expect((await call('/oauth/.well-known/openid-configuration')).status).toBe(200);
    expect((await call('/oauth/keys')).status).toBe(200);

    const started = performance.now();
    const ready = await call('/readyz');
    expect(ready.status).toBe(503);
    expect(performance.now() - started).toBeLessThan(2000);
    expect((await call('/healthz')).status).toBe(200);
  });

  it('stopped: every registered route answers within the timeouts, no 5xx but 503 with Retry-After', async () => {
    const answers = await walkEveryRoute(t.server.app, fetch, t.baseUrl, credentials(), LIMIT_MS);
    expect(outageViolations(answers, LIMIT_MS)).toEqual([]);
    expect(answers.filter((a) => a.status === 503).length).toBeGreaterThan(10);
    figures.routesWalkedStopped = answers.length;
    figures.stoppedLatencyMs = spread(answers.map((a) => a.ms));
  });

  it('stopped: a resync keeps the directory (a review of a known token keeps working)', async () => {
    expect(await t.server.directory.resync()).toBe(false);
    expect(await reviewed()).toBe(true);
  });

  it('started again: recovers within a second without a restart; the outage was two log lines', async () => {
    await cluster.start();
    const measured = await recovery();
    figures.recoveryAfterStart = measured;
    expect(measured.afterDatabaseMs).toBeLessThan(1000);
    expect((await passwordGrant()).status).toBe(200);
    expect((await call('/readyz')).status).toBe(200);
    expect(sinceMark()).toEqual([1, 1]);
    const back = t.logs.findLast((line) => line.includes('storage available again')) as string;
    expect(JSON.parse(back)).toMatchObject({ level: 30, outageMs: expect.any(Number) });
  });

  it('frozen: requests answer 503 within the timeouts, never hang; cached reviews keep working', async () => {
    mark();
    cluster.freeze();
    try {
      const answers: Answer[] = [];
      for (let i = 0; i < 3; i++) {
        const started = performance.now();
        const grant = await passwordGrant();
        answers.push({
          label: 'password grant',
          status: grant.status,
          ms: performance.now() - started,
          retryAfter: grant.headers.get('retry-after'),
          contentType: grant.headers.get('content-type') ?? '',
          body: await grant.text(),
        });
      }
      expect(answers.map((a) => a.status)).toEqual([503, 503, 503]);
      expect(await reviewed()).toBe(true);
      const started = performance.now();
      expect((await call('/readyz')).status).toBe(503);
      expect(performance.now() - started).toBeLessThan(2000);
      const walked = await walkEveryRoute(t.server.app, fetch, t.baseUrl, credentials(), LIMIT_MS);
      expect(outageViolations([...answers, ...walked], LIMIT_MS)).toEqual([]);
      const unavailable = [...answers, ...walked].filter((a) => a.status === 503);
      expect(unavailable.length).toBeGreaterThan(10);
      figures.frozen503LatencyMs = spread(unavailable.map((a) => a.ms));
    } finally {
      cluster.thaw();
    }
  });

  it('thawed: recovers within a second; two more log lines', async () => {
    const measured = await recovery();
    figures.recoveryAfterThaw = measured;
    expect(measured.afterDatabaseMs).toBeLessThan(1000);
    expect((await passwordGrant()).status).toBe(200);
    expect(sinceMark()).toEqual([1, 1]);
  });

  it('killed (SIGKILL): 503 meanwhile, and recovery within a second of the restart', async () => {
    mark();
    await cluster.kill();
    expect((await passwordGrant()).status).toBe(503);
    expect(await reviewed()).toBe(true);
    await cluster.start();
    const measured = await recovery();
    figures.recoveryAfterKill = measured;
    expect(measured.afterDatabaseMs).toBeLessThan(1000);
    expect(sinceMark()).toEqual([1, 1]);
    figures.logLinesPerOutage = 2;
  });
});
