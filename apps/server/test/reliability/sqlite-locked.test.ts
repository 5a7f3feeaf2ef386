import SqliteDatabase from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { testDatabaseUrls } from '../helpers/databases.js';
import { logged, outageViolations, walkEveryRoute } from './outage-support.js';

// SQLite locked by another connection (a backup tool, a second process) for longer than
// `database.busyTimeout`: every registered route answers within the busy timeout, nothing 5xx but
// 503 with Retry-After in its route's format, and the lock is one log line, not one per request.

const BUSY_TIMEOUT_S = 0.1;
const LIMIT_MS = 2000;
const sqlite = testDatabaseUrls().find((kind) => kind.name === 'sqlite');

describe('a SQLite database locked beyond busy_timeout', () => {
  let t: TestApp;
  let adminKey: string;
  let clientAuth: string;
  let accessToken: string;

  beforeAll(async () => {
    t = await startTestApp(sqlite as NonNullable<typeof sqlite>, {
      database: { busyTimeout: BUSY_TIMEOUT_S },
    });
    adminKey = await t.addApiKey(['admin', 'tokenreview']);
    await t.addUser('lena', 'a sturdy pass phrase!');
    const client = await t.addClient({ grants: ['password'], trusted: true });
    clientAuth = `Basic ${btoa(`${client.clientId}:${client.clientSecret}`)}`;
    const granted = await t.fetch(`${t.baseUrl}/oauth/token`, {
      method: 'POST',
      headers: { authorization: clientAuth, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'password',
        username: 'lena',
        password: 'a sturdy pass phrase!',
      }),
    });
    accessToken = ((await granted.json()) as { access_token: string }).access_token;
  });
  afterAll(async () => t?.close());

  it('answers 503 with Retry-After, never another 5xx, on every registered route; one log line', async () => {
    const locker = new SqliteDatabase(t.database.url.slice('sqlite:'.length));
    locker.exec('BEGIN EXCLUSIVE');
    let answers: Awaited<ReturnType<typeof walkEveryRoute>>;
    try {
      answers = await walkEveryRoute(
        t.app,
        t.fetch,
        t.baseUrl,
        { adminKey, clientAuth, accessToken, username: 'lena', password: 'a sturdy pass phrase!' },
        LIMIT_MS,
      );
    } finally {
      locker.exec('ROLLBACK');
      locker.close();
    }
    expect(outageViolations(answers, LIMIT_MS)).toEqual([]);
    // Writes wait for the lock and give up: the admin API's creations, sign-ins that record attempts.
    expect(answers.filter((a) => a.status === 503).length).toBeGreaterThan(0);
    // A lock is contention, not an outage: reads go on; one line says so, not one per request.
    expect(logged(t.logs, 'storage busy')).toBe(1);
    expect(logged(t.logs, 'storage unavailable')).toBe(0);
    // The next write after the lock is gone says the storage is back.
    const created = await t.fetch(`${t.baseUrl}/admin/v1/identity-providers`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'github', name: 'gh', clientId: 'Iv1.x', clientSecret: 'plain' }),
    });
    expect(created.status).toBe(201);
  });
});
