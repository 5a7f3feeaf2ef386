import { createApiKey } from '@idgate/core/admin';
import type { AuditEvent, AuditEventOf } from '@idgate/schema';
import Sqlite from 'better-sqlite3';
import { decodeJwt } from 'jose';
import pg from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { IdgateConfigInput } from '../../src/config.js';
import { type TestDatabaseKind, testDatabaseUrls } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

// Inserts into the audit table, counted at both drivers (Kysely prepares each SQLite statement and
// sends each PostgreSQL one through pg.Client#query).
let auditInserts = 0;
const isAuditInsert = (sql: unknown) => typeof sql === 'string' && /^insert into "audit_events"/i.test(sql);
const query = pg.Client.prototype.query;
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  const first = args[0] as string | { text?: string };
  if (isAuditInsert(typeof first === 'string' ? first : first?.text)) auditInserts++;
  return (query as (...a: unknown[]) => unknown).apply(this, args);
} as typeof query;
const prepare = Sqlite.prototype.prepare;
Sqlite.prototype.prepare = function (this: Sqlite.Database, source: string) {
  if (isAuditInsert(source)) auditInserts++;
  return prepare.call(this, source);
} as unknown as typeof prepare;
afterAll(() => {
  pg.Client.prototype.query = query;
  Sqlite.prototype.prepare = prepare;
});

const V1 = 'authentication.k8s.io/v1';

describe.each(testDatabaseUrls())(
  'audit events written in the background on $name',
  (kind: TestDatabaseKind) => {
    let t: TestServer | undefined;
    afterEach(async () => {
      await t?.close();
      t = undefined;
    });

    /** A server whose interval never fires in a test: flushes are explicit. */
    const start = async (audit: IdgateConfigInput['audit']) => {
      t = await startTestServer(kind, { audit: { tokenReviewInterval: 3600, ...audit } });
      const server = t;
      const admin = server.server.context.admin;
      const key = async (name: string) => createApiKey(admin, { name, scopes: ['tokenreview'] });
      const client = await server.addClient({ grants: ['client_credentials'], scopes: ['api'] });
      const basic = `Basic ${btoa(`${client.clientId}:${client.clientSecret}`)}`;
      const issue = async () => {
        const response = await fetch(`${server.issuer}/token`, {
          method: 'POST',
          headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ grant_type: 'client_credentials' }),
        });
        expect(response.status).toBe(200);
        return (await response.json()) as { access_token: string };
      };
      const review = async (apiKey: string, token: string) => {
        const response = await fetch(`${server.issuer}/authenticate`, {
          method: 'POST',
          headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ apiVersion: V1, kind: 'TokenReview', spec: { token } }),
        });
        expect(response.status).toBe(200);
        return ((await response.json()) as { status: { authenticated?: boolean } }).status;
      };
      const events = async <T extends AuditEvent['type']>(type: T) =>
        (await server.server.services.storage.auditEvents.list({
          limit: 1000,
          types: [type],
        })) as AuditEventOf<T>[];
      return { server, key, issue, review, events, client };
    };

    it('aggregates TokenReviews per API key, outcome and reason until a flush writes one event each', async () => {
      const { server, key, issue, review, events } = await start({ tokenReview: 'aggregated' });
      const [one, two] = [await key('one'), await key('two')];
      const { access_token: token } = await issue();
      for (let i = 0; i < 3; i++) expect(await review(one.key, token)).toMatchObject({ authenticated: true });
      for (let i = 0; i < 2; i++)
        expect(await review(one.key, 'not-a-jwt')).toMatchObject({ authenticated: false });
      expect(await review(two.key, 'not-a-jwt')).toMatchObject({ authenticated: false });
      // Nothing is written on the review path.
      expect(await events('token-review.decided')).toEqual([]);

      await server.server.context.audit.flush();
      const written = await events('token-review.decided');
      const byKey = (e: AuditEventOf<'token-review.decided'>) =>
        `${e.details.apiKeyId === one.record.id ? 'one' : 'two'} ${e.details.reason ?? 'ok'}`;
      expect(Object.fromEntries(written.map((e) => [byKey(e), e.details.count]))).toEqual({
        'one ok': 3,
        'one malformed': 2,
        'two malformed': 1,
      });
      for (const event of written) {
        expect(event).toMatchObject({
          actor: { kind: 'system', id: null },
          outcome: event.details.authenticated ? 'success' : 'failure',
          details: { cluster: null },
        });
        expect(Date.parse(event.details.firstAt)).toBeLessThanOrEqual(Date.parse(event.occurredAt));
      }
      expect(JSON.stringify(written)).not.toContain(token);

      await server.server.context.audit.flush();
      expect(await events('token-review.decided')).toHaveLength(3);
    });

    it('writes one event per review in all mode, and the last ones when the server closes', async () => {
      const { server, key, issue, review, events } = await start({ tokenReview: 'all' });
      const reviewer = await key('reviewer');
      const { access_token: token } = await issue();
      await review(reviewer.key, token);
      await review(reviewer.key, 'not-a-jwt');
      await server.server.context.audit.flush();
      expect(
        (await events('token-review.decided')).map((e) => [e.actor, e.details.count, e.details.reason]),
      ).toEqual([
        [{ kind: 'api-key', id: reviewer.record.id }, 1, null],
        [{ kind: 'api-key', id: reviewer.record.id }, 1, 'malformed'],
      ]);

      await review(reviewer.key, token);
      // Closing (what SIGTERM does) flushes before the database closes; read it back over a new server.
      const database = server.database;
      await server.server.close();
      t = undefined;
      const reopened = await startTestServer(
        { name: kind.name, create: async () => database },
        { audit: { tokenReviewInterval: 3600 } },
      );
      t = reopened;
      const after = await reopened.server.services.storage.auditEvents.list({
        limit: 100,
        types: ['token-review.decided'],
      });
      expect(after).toHaveLength(3);
    });

    it('writes no TokenReview event when audit.tokenReview is off', async () => {
      const { server, key, issue, review, events } = await start({ tokenReview: 'off' });
      const reviewer = await key('reviewer');
      const { access_token: token } = await issue();
      await review(reviewer.key, token);
      await review(reviewer.key, 'not-a-jwt');
      await server.server.context.audit.flush();
      expect(await events('token-review.decided')).toEqual([]);
    });

    it('stores the token.issued event of each of 20 concurrent client_credentials tokens, in fewer inserts', async () => {
      const { issue, events, client } = await start({});
      auditInserts = 0;
      const tokens = await Promise.all(Array.from({ length: 20 }, () => issue()));
      const inserts = auditInserts;
      const jtis = tokens.map(({ access_token }) => decodeJwt(access_token).jti);
      const issued = await events('token.issued');
      expect(issued.map((e) => e.details.jti).sort()).toEqual(jtis.sort());
      for (const event of issued)
        expect(event).toMatchObject({
          actor: { kind: 'client', id: client.clientId },
          clientId: client.clientId,
          address: '127.0.0.1',
          details: { grantType: 'client_credentials', grantId: null },
        });
      expect(inserts).toBeGreaterThan(0);
      expect(inserts).toBeLessThan(20);
    });
  },
);

const sqlite = testDatabaseUrls().filter((kind) => kind.name === 'sqlite');

describe.each(sqlite)('client_credentials without its audit event on $name', (kind) => {
  let t: TestServer | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it('answers 503 with Retry-After and no token when the event cannot be stored (database locked)', async () => {
    t = await startTestServer(kind, { database: { busyTimeout: 0.1 } });
    const client = await t.addClient({ grants: ['client_credentials'], scopes: ['api'] });
    const locker = new Sqlite(t.database.url.slice('sqlite:'.length));
    locker.exec('BEGIN EXCLUSIVE');
    let response: Response;
    try {
      response = await fetch(`${t.issuer}/token`, {
        method: 'POST',
        headers: {
          authorization: `Basic ${btoa(`${client.clientId}:${client.clientSecret}`)}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: new URLSearchParams({ grant_type: 'client_credentials' }),
      });
    } finally {
      locker.exec('ROLLBACK');
      locker.close();
    }
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toMatch(/^\d+$/);
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ error: 'temporarily_unavailable' });
    expect(body).not.toHaveProperty('access_token');
    expect(await t.server.services.storage.auditEvents.list({ limit: 10, types: ['token.issued'] })).toEqual(
      [],
    );
  });
});
