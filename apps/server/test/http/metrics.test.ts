import { randomUUID } from 'node:crypto';
import {
  type LoginAttemptRecord,
  type LoginAttemptRepository,
  TOKEN_REVIEW_DENIAL_MESSAGES,
} from '@idgate/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/storage/index.js';
import {
  createMetrics,
  denialReason,
  instrumentLoginAttempts,
  type Metrics,
  recordTokenReview,
  responseObserver,
} from '../../src/telemetry/metrics.js';
import { testDatabaseUrls } from '../helpers/databases.js';
import { addUpstreamProvider } from '../helpers/federation.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startUpstreamOidc, type UpstreamOidc } from '../helpers/upstream-oidc.js';
import { UserAgent } from '../helpers/user-agent.js';

/** One sample of the text exposition format. */
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

function parseSamples(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match === null) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[key as string] = value as string;
    }
    samples.push({ name: match[1] as string, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The value of the sample `name` with exactly these labels (undefined when there is none). */
function sampleValue(
  samples: Sample[],
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const wanted = Object.entries(labels).sort();
  return samples.find(
    (s) => s.name === name && JSON.stringify(Object.entries(s.labels).sort()) === JSON.stringify(wanted),
  )?.value;
}

const named = (samples: Sample[], name: string) => samples.filter((s) => s.name === name);

// Hooks run when the response has been handed to the socket: let them finish before a scrape.
const settle = () => new Promise((resolve) => setTimeout(resolve, 25));

describe.each(testDatabaseUrls())('GET /metrics on $name', (kind) => {
  let t: TestServer;
  let client: { clientId: string; clientSecret: string };
  let accessToken: string;
  let text: string;
  let samples: Sample[];
  let response: Response;
  const secretQuery = `probe-${randomUUID()}`;
  const unknownId = randomUUID();

  const token = (body: Record<string, string>, headers: Record<string, string> = {}) =>
    fetch(`${t.issuer}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams(body),
    });

  beforeAll(async () => {
    t = await startTestServer(kind);
    client = await t.addClient({ grants: ['client_credentials'], scopes: ['api'] });
    expect((await fetch(`${t.issuer}/.well-known/openid-configuration`)).status).toBe(200);
    const refused = await token(
      { grant_type: 'client_credentials' },
      { authorization: `Basic ${btoa(`${client.clientId}:wrong-${client.clientSecret}`)}` },
    );
    expect(refused.status).toBe(401);
    const issued = await token({
      grant_type: 'client_credentials',
      client_id: client.clientId,
      client_secret: client.clientSecret,
    });
    expect(issued.status).toBe(200);
    accessToken = ((await issued.json()) as { access_token: string }).access_token;
    expect((await fetch(`${t.baseUrl}/healthz?access_token=${secretQuery}`)).status).toBe(200);
    expect((await fetch(`${t.baseUrl}/no/such/${unknownId}`)).status).toBe(404);
    expect((await fetch(`${t.baseUrl}/admin/v1/identity-providers/idp-${unknownId}`)).status).toBe(401);
    await settle();
    response = await fetch(`${t.baseUrl}/metrics`);
    text = await response.text();
    samples = parseSamples(text);
  });
  afterAll(async () => t?.close());

  it('answers the Prometheus text format, never cached, without credentials', () => {
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(text).toContain('# TYPE idgate_http_requests_total counter');
    expect(text).toContain('# TYPE idgate_http_request_duration_seconds histogram');
  });

  it('counts requests by method, route pattern and status', () => {
    const requests = (method: string, route: string, status: string) =>
      sampleValue(samples, 'idgate_http_requests_total', { method, route, status });
    expect(requests('GET', '/oauth/.well-known/openid-configuration', '200')).toBe(1);
    expect(requests('POST', '/oauth/token', '401')).toBe(1);
    expect(requests('POST', '/oauth/token', '200')).toBe(1);
    expect(requests('GET', '/healthz', '200')).toBe(1);
    expect(requests('GET', 'unmatched', '404')).toBe(1);
    expect(requests('GET', '/admin/v1/identity-providers/:name', '401')).toBe(1);
    // Its own request is counted once it has been answered.
    expect(requests('GET', '/metrics', '200')).toBeUndefined();
    const total = named(samples, 'idgate_http_requests_total').reduce((sum, s) => sum + s.value, 0);
    expect(total).toBe(6);
  });

  it('times requests in a histogram with sub-millisecond buckets', () => {
    const labels = { method: 'POST', route: '/oauth/token' };
    expect(sampleValue(samples, 'idgate_http_request_duration_seconds_count', labels)).toBe(2);
    expect(sampleValue(samples, 'idgate_http_request_duration_seconds_sum', labels)).toBeGreaterThan(0);
    expect(
      sampleValue(samples, 'idgate_http_request_duration_seconds_bucket', { ...labels, le: '0.0005' }),
    ).toEqual(expect.any(Number));
    expect(
      sampleValue(samples, 'idgate_http_request_duration_seconds_bucket', { ...labels, le: '+Inf' }),
    ).toBe(2);
  });

  it('counts issued tokens by grant type, successful responses only', () => {
    expect(named(samples, 'idgate_tokens_issued_total')).toEqual([
      { name: 'idgate_tokens_issued_total', labels: { grant_type: 'client_credentials' }, value: 1 },
    ]);
  });

  it('labels routes by pattern: no ids, tokens, secrets or query strings', () => {
    const routes = new Set(named(samples, 'idgate_http_requests_total').map((s) => s.labels.route));
    expect([...routes].sort()).toEqual([
      '/admin/v1/identity-providers/:name',
      '/healthz',
      '/oauth/.well-known/openid-configuration',
      '/oauth/token',
      'unmatched',
    ]);
    for (const secret of [
      client.clientSecret,
      accessToken,
      accessToken.split('.')[1] as string,
      secretQuery,
      unknownId,
      'access_token',
      TEST_SECRET_FRAGMENT,
      '?',
    ]) {
      expect(text).not.toContain(secret);
    }
  });

  it('has the default process metrics of this server registry', () => {
    expect(named(samples, 'process_cpu_user_seconds_total')).toHaveLength(1);
    expect(named(samples, 'nodejs_heap_size_used_bytes')).toHaveLength(1);
    expect(text).toContain('nodejs_eventloop_lag_seconds');
  });

  it('reports the database pool', () => {
    const pool = (state: string) => sampleValue(samples, 'idgate_db_pool', { state });
    const [total, idle, waiting] = [pool('total'), pool('idle'), pool('waiting')];
    if (kind.name === 'sqlite') {
      expect({ total, idle, waiting }).toEqual({ total: 1, idle: 1, waiting: 0 });
    } else {
      // A pg pool: real counts, read at scrape time (connections may have idled out already).
      expect(Number.isInteger(total)).toBe(true);
      expect(total).toBeGreaterThanOrEqual(idle as number);
      expect(idle).toBeGreaterThanOrEqual(0);
      expect(waiting).toBe(0);
    }
  });

  it('counts the scrape itself on the next one, and keeps counts per server', async () => {
    await settle();
    const next = parseSamples(await (await fetch(`${t.baseUrl}/metrics`)).text());
    expect(
      sampleValue(next, 'idgate_http_requests_total', { method: 'GET', route: '/metrics', status: '200' }),
    ).toBe(1);
    // Another server in this process starts from zero.
    const other = await startTestServer(kind);
    try {
      const fresh = parseSamples(await (await fetch(`${other.baseUrl}/metrics`)).text());
      expect(named(fresh, 'idgate_http_requests_total')).toEqual([]);
      // …and the first keeps its own counts.
      const again = parseSamples(await (await fetch(`${t.baseUrl}/metrics`)).text());
      expect(
        sampleValue(again, 'idgate_http_requests_total', { method: 'GET', route: '/metrics', status: '200' }),
      ).toBe(2);
    } finally {
      await other.close();
    }
  });
});

// The test server's key-sealing secret (helpers/server.ts) must never show.
const TEST_SECRET_FRAGMENT = 'integration-test-secret';

describe.each(testDatabaseUrls())('tokens answered by a federation callback on $name', (kind) => {
  let t: TestServer;
  let upstream: UpstreamOidc;

  beforeAll(async () => {
    t = await startTestServer(kind);
    upstream = await startUpstreamOidc({ redirectUris: [`${t.issuer}/callback/corp`] });
    upstream.accounts.set('u-1', { sub: 'u-1', preferred_username: 'alice', email_verified: false });
    upstream.nextAccount = 'u-1';
    const tokenClient = await t.addClient({ grants: ['authorization_code'], trusted: true });
    await addUpstreamProvider(t, upstream, {
      tokenClientId: tokenClient.clientId,
    });
  });
  afterAll(async () => {
    await upstream?.stop();
    await t?.close();
  });

  it('counts them as grant_type="federation", with the callback route as a pattern', async () => {
    const agent = new UserAgent();
    let response = await agent.request(`${t.issuer}/login/corp`);
    for (let hop = 0; hop < 12 && response.headers.get('location') !== null; hop++) {
      response = await agent.request(new URL(response.headers.get('location') as string, response.url));
    }
    expect(response.status).toBe(200);
    const { access_token } = (await response.json()) as { access_token: string };
    await settle();
    const text = await (await fetch(`${t.baseUrl}/metrics`)).text();
    const samples = parseSamples(text);
    expect(sampleValue(samples, 'idgate_tokens_issued_total', { grant_type: 'federation' })).toBe(1);
    expect(
      sampleValue(samples, 'idgate_http_requests_total', {
        method: 'GET',
        route: '/oauth/callback/:callback',
        status: '200',
      }),
    ).toBe(1);
    expect(text).not.toContain(access_token);
    expect(text).not.toContain('?');
    expect(text).not.toContain('alice');
  });
});

describe('metric helpers', () => {
  const scrape = async (metrics: Metrics) => parseSamples(await metrics.registry.metrics());

  it('recordTokenReview counts outcomes and denial reasons as bounded slugs', async () => {
    const metrics = createMetrics();
    recordTokenReview(metrics, { authenticated: true });
    recordTokenReview(metrics, { authenticated: true });
    recordTokenReview(metrics, { authenticated: false, error: 'token has expired' });
    recordTokenReview(metrics, { authenticated: false, error: 'token has been revoked' });
    recordTokenReview(metrics, { authenticated: false, error: `something new about eyJ${randomUUID()}` });
    recordTokenReview(metrics, { authenticated: false });
    const samples = await scrape(metrics);
    expect(sampleValue(samples, 'idgate_token_reviews_total', { outcome: 'authenticated' })).toBe(2);
    expect(sampleValue(samples, 'idgate_token_reviews_total', { outcome: 'denied' })).toBe(4);
    expect(
      named(samples, 'idgate_token_review_denials_total').map((s) => [s.labels.reason, s.value]),
    ).toEqual([
      ['expired', 1],
      ['revoked', 1],
      ['other', 2],
    ]);
  });

  it('every denial of the core has its own reason: its code', () => {
    for (const [code, message] of Object.entries(TOKEN_REVIEW_DENIAL_MESSAGES)) {
      expect(denialReason(message)).toMatch(/^[a-z_]{1,32}$/);
      expect(denialReason(message)).toBe(code);
    }
    for (const message of [
      'token is missing',
      'client no longer exists',
      'user no longer exists',
      'user is disabled',
      'token audience does not match',
    ]) {
      expect(denialReason(message)).not.toBe('other');
    }
    expect(denialReason(undefined)).toBe('other');
  });

  it('instrumentLoginAttempts counts by provider and outcome and delegates everything', async () => {
    class Repo implements LoginAttemptRepository {
      readonly #records: LoginAttemptRecord[] = [];
      async record(attempt: LoginAttemptRecord) {
        this.#records.push(attempt);
      }
      async failuresForUsername(username: string) {
        return {
          count: this.#records.filter((r) => r.username === username && !r.success).length,
          latest: null,
        };
      }
      async failuresFromAddress() {
        return { count: 0, latest: null };
      }
      async failingAddresses() {
        return [];
      }
      async failuresForClient() {
        return { count: 0, latest: null };
      }
      async hasSucceededFrom() {
        return false;
      }
      async listByUsername(username: string) {
        return this.#records.filter((r) => r.username === username);
      }
    }
    const metrics = createMetrics();
    const repo = instrumentLoginAttempts(new Repo(), metrics);
    const attempt = (provider: string, success: boolean, reason: string | null): LoginAttemptRecord => ({
      id: randomUUID(),
      username: 'alice',
      userId: null,
      sourceAddress: '203.0.113.7',
      provider,
      success,
      reason,
      createdAt: new Date(),
    });
    await repo.record(attempt('password', true, null));
    await repo.record(attempt('password', false, 'invalid_credentials'));
    await repo.record(attempt('password', false, 'locked'));
    await repo.record(attempt('password', false, 'locked'));
    await repo.record(attempt('corp', true, null));
    await repo.record(attempt('corp', false, 'disabled'));
    expect(await repo.listByUsername('alice', 10)).toHaveLength(6);
    expect((await repo.failuresForUsername('alice', new Date(0))).count).toBe(4);
    const samples = await scrape(metrics);
    const logins = (provider: string, outcome: string) =>
      sampleValue(samples, 'idgate_logins_total', { provider, outcome });
    expect(logins('password', 'success')).toBe(1);
    expect(logins('password', 'failure')).toBe(1);
    expect(logins('password', 'locked')).toBe(2);
    expect(logins('corp', 'success')).toBe(1);
    expect(logins('corp', 'failure')).toBe(1);
  });

  it('bounds the provider label', async () => {
    const metrics = createMetrics();
    const repo = instrumentLoginAttempts(
      {
        record: async () => {},
        failuresForUsername: async () => ({ count: 0, latest: null }),
        failuresFromAddress: async () => ({ count: 0, latest: null }),
        failuresForClient: async () => ({ count: 0, latest: null }),
        failingAddresses: async () => [],
        hasSucceededFrom: async () => false,
        listByUsername: async () => [],
      },
      metrics,
    );
    for (let i = 0; i < 100; i++) {
      await repo.record({
        id: randomUUID(),
        username: 'x',
        userId: null,
        sourceAddress: '::1',
        provider: `idp-${i}`,
        success: true,
        reason: null,
        createdAt: new Date(),
      });
    }
    const providers = new Set(
      named(await scrape(metrics), 'idgate_logins_total').map((s) => s.labels.provider),
    );
    expect(providers.size).toBe(65);
    expect(providers.has('other')).toBe(true);
  });

  it('several metric sets live side by side in one process', async () => {
    const a = createMetrics();
    const b = createMetrics();
    a.tokensIssued.inc({ grant_type: 'password' });
    expect(sampleValue(await scrape(a), 'idgate_tokens_issued_total', { grant_type: 'password' })).toBe(1);
    expect(named(await scrape(b), 'idgate_tokens_issued_total')).toEqual([]);
  });

  it('responseObserver counts each answered request under bounded labels, series made once and reused', async () => {
    const metrics = createMetrics();
    const observe = responseObserver(metrics);
    const answered = (
      method: string,
      url: string | undefined,
      statusCode: number,
      options: { is404?: boolean; body?: unknown; elapsedTime?: number } = {},
    ) =>
      observe(
        {
          method,
          routeOptions: { url },
          is404: options.is404 ?? false,
          body: options.body,
        } as FastifyRequest,
        {
          statusCode,
          elapsedTime: options.elapsedTime ?? 2,
          getHeader: () => 'application/json',
        } as unknown as FastifyReply,
      );
    answered('POST', '/oauth/authenticate', 200);
    answered('POST', '/oauth/authenticate', 200, { elapsedTime: 3000 });
    answered('POST', '/oauth/authenticate', 401);
    answered('PROPFIND', '/oauth/authenticate', 404, { is404: true });
    answered('GET', undefined, 404);
    answered('POST', '/oauth/token', 200, { body: { grant_type: 'client_credentials' } });
    answered('POST', '/oauth/token', 400, { body: { grant_type: 'client_credentials' } });
    answered('GET', '/oauth/callback/:callback', 200);
    let samples = await scrape(metrics);
    const requests = (method: string, route: string, status: string) =>
      sampleValue(samples, 'idgate_http_requests_total', { method, route, status });
    expect(requests('POST', '/oauth/authenticate', '200')).toBe(2);
    expect(requests('POST', '/oauth/authenticate', '401')).toBe(1);
    expect(requests('other', 'unmatched', '404')).toBe(1);
    expect(requests('GET', 'unmatched', '404')).toBe(1);
    expect(named(samples, 'idgate_http_requests_total')).toHaveLength(7);
    const review = { method: 'POST', route: '/oauth/authenticate' };
    expect(sampleValue(samples, 'idgate_http_request_duration_seconds_count', review)).toBe(3);
    expect(sampleValue(samples, 'idgate_http_request_duration_seconds_sum', review)).toBeCloseTo(3.004, 6);
    expect(
      sampleValue(samples, 'idgate_http_request_duration_seconds_bucket', { ...review, le: '0.0025' }),
    ).toBe(2);
    expect(
      sampleValue(samples, 'idgate_http_request_duration_seconds_bucket', { ...review, le: '2.5' }),
    ).toBe(2);
    expect(
      sampleValue(samples, 'idgate_http_request_duration_seconds_bucket', { ...review, le: '+Inf' }),
    ).toBe(3);
    expect(
      named(samples, 'idgate_tokens_issued_total').map((sample) => [sample.labels.grant_type, sample.value]),
    ).toEqual([
      ['client_credentials', 1],
      ['federation', 1],
    ]);
    // The series it keeps still count after the registry is reset.
    metrics.registry.resetMetrics();
    answered('POST', '/oauth/authenticate', 200);
    samples = await scrape(metrics);
    expect(requests('POST', '/oauth/authenticate', '200')).toBe(1);
    expect(named(samples, 'idgate_http_requests_total')).toHaveLength(1);
    expect(sampleValue(samples, 'idgate_http_request_duration_seconds_count', review)).toBe(1);
  });

  it('reports SQLite as one database connection', async () => {
    const database = await openDatabase('sqlite::memory:');
    try {
      expect(named(await scrape(createMetrics()), 'idgate_db_pool')).toEqual([]);
      const metrics = createMetrics(database);
      expect(sampleValue(await scrape(metrics), 'idgate_db_pool', { state: 'total' })).toBe(1);
    } finally {
      await database.close();
    }
  });
});
