import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import {
  canRunThrowawayPostgres,
  startThrowawayPostgres,
  type ThrowawayPostgres,
} from '../helpers/throwaway-postgres.js';
import { logged, outageViolations, walkEveryRoute } from './outage-support.js';

// A frozen PostgreSQL (SIGSTOP of its processes: a partition, a stuck primary) under a running
// idgate with the default query timeout (12 s): the heartbeat (`database.heartbeatTimeout`)
// notices, and from then on what needs the database answers 503 with Retry-After at once —
// requests already waiting on it included — while what is served from memory never waits on it,
// even right after a resync emptied the directory's current generation; after SIGCONT the
// service recovers on its own. On the code before the heartbeat the freeze was noticed only by a
// query's 12 s timeout.

/** Long enough that the in-memory requests below finish before the freeze is noticed, loaded or not. */
const HEARTBEAT_TIMEOUT_S = 3;
/** What the issue allows between the freeze being noticed and a 503. */
const FAIL_FAST_MS = 2000;
/** Generous ceilings for waits that a loaded machine may stretch (none of them is an expiry). */
const NOTICED_WITHIN_MS = 10_000;
const RECOVERED_WITHIN_MS = 15_000;
const USER = { username: 'frida', password: 'a frozen pass phrase!' };
const REDIRECT = 'https://app.example.test/cb';

describe.skipIf(!canRunThrowawayPostgres())('a frozen PostgreSQL (SIGSTOP) on a throwaway cluster', () => {
  let cluster: ThrowawayPostgres;
  let t: TestServer;
  let adminKey: string;
  let clientAuth: string;
  let browserClientId: string;
  let accessToken: string;

  const call = (path: string, init: RequestInit = {}) =>
    fetch(`${t.baseUrl}${path}`, { redirect: 'manual', signal: AbortSignal.timeout(30_000), ...init });
  const passwordGrant = () =>
    call('/oauth/token', {
      method: 'POST',
      headers: { authorization: clientAuth, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'password', ...USER, scope: 'openid' }),
    });
  const authorize = () =>
    call(
      `/oauth/authorize?${new URLSearchParams({
        client_id: browserClientId,
        response_type: 'code',
        redirect_uri: REDIRECT,
        scope: 'openid',
        state: 'st',
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        code_challenge_method: 'S256',
      })}`,
      { headers: { accept: 'text/html' } },
    );
  const adminList = () => call('/admin/v1/users', { headers: { authorization: `Bearer ${adminKey}` } });
  const review = () =>
    call('/oauth/authenticate', {
      method: 'POST',
      headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenReview',
        spec: { token: accessToken },
      }),
    });
  const introspect = () =>
    call('/oauth/introspect', {
      method: 'POST',
      headers: { authorization: clientAuth, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: accessToken }),
    });
  const userinfo = () => call('/oauth/userinfo', { headers: { authorization: `Bearer ${accessToken}` } });
  const discovery = () => call('/oauth/.well-known/openid-configuration');
  const jwks = () => call('/oauth/keys');
  const healthAvailable = () => t.server.context.database.health.available;
  const reviewEvents = () =>
    t.server.services.storage.auditEvents.list({ limit: 1000, types: ['token-review.decided'] });
  let reviewEventsBefore = 0;
  const figures: Record<string, number> = {};

  /** The in-memory paths, each checked to answer as a known token's should. */
  async function fromMemory(): Promise<Array<{ what: string; status: number; body: string }>> {
    const answers = await Promise.all(
      Object.entries({ review, introspect, userinfo, discovery, jwks }).map(async ([what, send]) => {
        const response = await send();
        return { what, status: response.status, body: await response.text() };
      }),
    );
    for (const answer of answers) {
      if (answer.what === 'review')
        expect(JSON.parse(answer.body)).toMatchObject({ status: { authenticated: true } });
      if (answer.what === 'introspect') expect(JSON.parse(answer.body)).toMatchObject({ active: true });
    }
    return answers;
  }

  /** Polls `check` until it holds; fails after `ms`. */
  async function until(check: () => boolean | Promise<boolean>, ms: number, what: string): Promise<number> {
    const started = performance.now();
    while (performance.now() - started < ms) {
      if (await Promise.resolve(check()).catch(() => false)) return performance.now();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error(`${what}: not within ${ms} ms`);
  }

  beforeAll(async () => {
    cluster = await startThrowawayPostgres();
    t = await startTestServer(
      { name: 'postgres', create: async () => ({ url: cluster.url, drop: async () => {} }) },
      // The default connect (5 s), statement (10 s) and query (12 s) timeouts.
      {
        database: { url: cluster.url, heartbeatTimeout: HEARTBEAT_TIMEOUT_S },
        // Each review an event of its own, written only when the test flushes.
        audit: { tokenReview: 'all', tokenReviewInterval: 3600 },
      },
    );
    adminKey = await t.addApiKey(['admin', 'tokenreview']);
    await t.addUser(USER.username, USER.password);
    const client = await t.addClient({ grants: ['password', 'refresh_token'], trusted: true });
    clientAuth = `Basic ${btoa(`${client.clientId}:${client.clientSecret}`)}`;
    browserClientId = (
      await t.addClient({ grants: ['authorization_code'], public: true, redirectUris: [REDIRECT] })
    ).clientId;
    const granted = await passwordGrant();
    expect(granted.status).toBe(200);
    accessToken = ((await granted.json()) as { access_token: string }).access_token;
    expect([302, 303]).toContain((await authorize()).status);
    expect((await adminList()).status).toBe(200);
    for (const answer of await fromMemory()) expect(answer.status, answer.what).toBe(200);
    await t.server.context.audit.flush();
    reviewEventsBefore = (await reviewEvents()).length;
    expect(reviewEventsBefore).toBeGreaterThan(0);
  }, 90_000);

  afterAll(async () => {
    cluster?.thaw();
    await t?.close().catch(() => undefined);
    await cluster?.destroy();
    console.log(`db-frozen figures: ${JSON.stringify(figures)}`);
  });

  it('in-memory paths answer without waiting; what needs the database answers 503 within 2 s of the freeze being noticed, in flight or not', async () => {
    // A resync empties the directory's current generation: the review, introspection and
    // userinfo below must answer from what was known before it, not load from the database.
    expect(await t.server.directory.resync()).toBe(true);
    const unavailableLines = logged(t.logs, 'storage unavailable');
    const frozenAt = performance.now();
    cluster.freeze();
    // Waiting on the database when it was noticed: more than the pool's ten connections.
    const inFlight = [passwordGrant(), authorize(), ...Array.from({ length: 12 }, adminList)].map((sent) =>
      sent.then(async (response) => ({
        status: response.status,
        retryAfter: response.headers.get('retry-after'),
        at: performance.now(),
        body: await response.text(),
      })),
    );
    // Served from memory before the heartbeat has even noticed: nothing of it waited on the database.
    const early = await fromMemory();
    expect(healthAvailable()).toBe(true);
    expect(early.map(({ what, status }) => `${what} ${status}`)).toEqual([
      'review 200',
      'introspect 200',
      'userinfo 200',
      'discovery 200',
      'jwks 200',
    ]);

    const noticed = await until(
      () => logged(t.logs, 'storage unavailable') > unavailableLines,
      NOTICED_WITHIN_MS,
      'the freeze noticed',
    );
    figures.noticedAfterFreezeMs = Math.round(noticed - frozenAt);
    const answered = await Promise.all(inFlight);
    figures.inFlight503AfterNoticedMaxMs = Math.round(Math.max(...answered.map((a) => a.at - noticed)));
    for (const answer of answered) {
      expect(answer.status).toBe(503);
      expect(answer.retryAfter).toMatch(/^[0-9]+$/);
      expect(answer.at - noticed).toBeLessThan(FAIL_FAST_MS);
    }

    // Noticed: every new request that needs the database answers 503 at once.
    for (const send of [passwordGrant, authorize, adminList]) {
      const started = performance.now();
      const response = await send();
      expect(response.status).toBe(503);
      expect(response.headers.get('retry-after')).toMatch(/^[0-9]+$/);
      expect(performance.now() - started).toBeLessThan(FAIL_FAST_MS);
    }
    const ready = performance.now();
    expect((await call('/readyz')).status).toBe(503);
    expect(performance.now() - ready).toBeLessThan(FAIL_FAST_MS);
    for (const answer of await fromMemory()) expect(answer.status, answer.what).toBe(200);

    // The reviews' audit events cannot be written now: the write fails at once and keeps them.
    const flushing = performance.now();
    await t.server.context.audit.flush();
    expect(performance.now() - flushing).toBeLessThan(FAIL_FAST_MS);

    // Every registered route, with the query timeout at its default of 12 s: none waits for it.
    const walked = await walkEveryRoute(
      t.server.app,
      fetch,
      t.baseUrl,
      { adminKey, clientAuth, accessToken, ...USER },
      FAIL_FAST_MS * 2,
    );
    expect(outageViolations(walked, FAIL_FAST_MS * 2)).toEqual([]);
    expect(walked.filter((answer) => answer.status === 503).length).toBeGreaterThan(10);
  }, 60_000);

  it('after SIGCONT everything recovers without a restart', async () => {
    const availableLines = logged(t.logs, 'storage available again');
    const thawedAt = performance.now();
    cluster.thaw();
    const recovered = await until(
      async () => (await passwordGrant()).status === 200,
      RECOVERED_WITHIN_MS,
      'a password grant after the thaw',
    );
    figures.passwordGrant200AfterThawMs = Math.round(recovered - thawedAt);
    expect(logged(t.logs, 'storage available again')).toBe(availableLines + 1);
    expect([302, 303]).toContain((await authorize()).status);
    expect((await adminList()).status).toBe(200);
    expect((await call('/readyz')).status).toBe(200);
    expect(await t.server.directory.resync()).toBe(true);
    // The reviews answered during the freeze (two rounds of them at least) are in the trail now.
    await t.server.context.audit.flush();
    expect((await reviewEvents()).length).toBeGreaterThanOrEqual(reviewEventsBefore + 2);
    for (const answer of await fromMemory()) expect(answer.status, answer.what).toBe(200);
    // The pool was not left full of connections to the frozen server.
    const answers = await Promise.all(Array.from({ length: 20 }, adminList));
    expect(answers.map((response) => response.status)).toEqual(Array(20).fill(200));
  }, 60_000);
});
