import { hashSecret } from '@idgate/core';
import SqliteDatabase from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { testDatabaseUrls } from '../helpers/databases.js';

// The grant steps' round trips, counted at the driver (every statement PostgreSQL's `pg` sends,
// every statement better-sqlite3 runs, BEGIN and COMMIT included): each step is one
// transaction holding its claim, what the claim lets through and its audit events; a claim comes
// back from its own update (RETURNING) instead of a re-read; the user comes from the directory's
// memory; an insert inside a transaction needs no savepoint. Left out: the change feed's reads
// and PostgreSQL's heartbeat (`select 1` on a connection of its own), which run on their own clock, and the reloads of what the directory holds besides users (a
// resync, which a loaded machine can set off at any time, reloads keys and revocations, and the
// next request reads its client again): none of them is a grant step's.
const BACKGROUND =
  /^select .* from "(change_log|signing_keys|revocations|oauth_clients|api_keys)"|^select 1$/;
const statements: string[] = [];
let counting = false;
const count = (text: string) => {
  if (counting && !BACKGROUND.test(text)) statements.push(text);
};
const query = pg.Client.prototype.query;
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  const first = args[0] as string | { text?: string };
  count(typeof first === 'string' ? first : (first.text ?? ''));
  return (query as (...a: unknown[]) => unknown).apply(this, args);
} as typeof query;
// SQLite: counted where a statement runs (a prepared statement is reused, so preparing counts less).
const probe = new SqliteDatabase(':memory:');
const statementPrototype = Object.getPrototypeOf(probe.prepare('select 1')) as Record<
  'run' | 'all' | 'get' | 'iterate',
  (this: SqliteDatabase.Statement, ...args: unknown[]) => unknown
>;
probe.close();
for (const method of ['run', 'all', 'get', 'iterate'] as const) {
  const original = statementPrototype[method];
  statementPrototype[method] = function (this: SqliteDatabase.Statement, ...args: unknown[]) {
    count(this.source);
    return original.apply(this, args);
  };
}

const REDIRECT = 'https://app.example.com/cb';
const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

describe.each(testDatabaseUrls())('statements per grant step on $name', (kind) => {
  const postgres = kind.name === 'postgres';
  let t: TestApp;
  let basic: string;
  let clientId: string;
  let userId: string;

  beforeAll(async () => {
    t = await startTestApp(kind, { tokens: { refreshReuseWindow: 10 } });
    userId = await t.addUser('rey', 'a sturdy pass phrase!');
    const client = await t.addClient({
      trusted: true,
      grants: ['password', 'refresh_token', 'authorization_code', DEVICE_GRANT],
      scopes: ['openid', 'offline_access'],
      redirectUris: [REDIRECT],
    });
    clientId = client.clientId;
    basic = `Basic ${btoa(`${client.clientId}:${client.clientSecret}`)}`;
  });
  afterAll(async () => t?.close());

  const token = async (body: Record<string, string>) => {
    const response = await t.fetch(`${t.issuer}/token`, {
      method: 'POST',
      headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(body),
    });
    return { status: response.status, body: (await response.json()) as Record<string, string> };
  };
  /** The statements that `work` ran. */
  const counted = async <T>(work: () => Promise<T>): Promise<{ result: T; sql: string[] }> => {
    statements.length = 0;
    counting = true;
    try {
      const result = await work();
      return { result, sql: [...statements] };
    } finally {
      counting = false;
    }
  };
  const verbs = (sql: string[]) => sql.map((text) => text.split(' ').slice(0, 3).join(' '));

  it('a refresh rotation reads the token, then claims it, records the grant use, stores the successor and the events in one transaction', async () => {
    const signIn = await token({
      grant_type: 'password',
      username: 'rey',
      password: 'a sturdy pass phrase!',
      scope: 'openid offline_access',
    });
    // The first refresh loads the user into the directory; the next ones (and the steps below,
    // for the same user) find them there.
    const first = await token({
      grant_type: 'refresh_token',
      refresh_token: signIn.body.refresh_token as string,
    });
    const { result, sql } = await counted(() =>
      token({ grant_type: 'refresh_token', refresh_token: first.body.refresh_token as string }),
    );
    expect(result.status).toBe(200);
    expect(verbs(sql), sql.join('\n')).toEqual([
      'select * from',
      'begin',
      'update "refresh_tokens" set',
      'update "grants" set',
      'insert into "refresh_tokens"',
      'insert into "audit_events"',
      'commit',
    ]);
  });

  it('a code exchange claims the code, opens the grant pointed at by the code, stores the refresh token and the events in one transaction', async () => {
    const code = 'a-code-for-counting';
    const now = Date.now();
    await t.services.storage.authorizationCodes.create({
      hash: await hashSecret(code),
      clientId,
      userId,
      redirectUri: REDIRECT,
      scope: ['openid', 'offline_access'],
      nonce: null,
      resource: null,
      codeChallenge: null,
      codeChallengeMethod: null,
      authTime: new Date(now),
      sessionId: null,
      grantId: null,
      createdAt: new Date(now),
      expiresAt: new Date(now + 60_000),
      consumedAt: null,
    });
    const { result, sql } = await counted(() =>
      token({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT }),
    );
    expect(result.status).toBe(200);
    expect(verbs(sql), sql.join('\n')).toEqual([
      'begin',
      'update "authorization_codes" set',
      // PostgreSQL: the grant and the code's pointer to it in one statement.
      ...(postgres ? ['with "opened" as'] : ['insert into "grants"', 'update "authorization_codes" set']),
      'insert into "refresh_tokens"',
      'insert into "audit_events"',
      'commit',
    ]);
  });

  it('a pending device poll is one statement, slow_down included; the redemption one transaction', async () => {
    const devices = t.services.storage.deviceAuthorizations;
    const now = Date.now();
    const device = async (deviceCode: string, userCode: string, interval: number) => {
      const hash = await hashSecret(deviceCode);
      await devices.create({
        deviceCodeHash: hash,
        userCode,
        clientId,
        scope: ['openid', 'offline_access'],
        resource: null,
        status: 'pending',
        userId: null,
        authTime: null,
        sessionId: null,
        createdAt: new Date(now),
        expiresAt: new Date(now + 600_000),
        lastPolledAt: null,
        interval,
        consumedAt: null,
      });
      return hash;
    };
    const poll = (deviceCode: string) =>
      counted(() => token({ grant_type: DEVICE_GRANT, device_code: deviceCode }));
    const onePoll = ['update "device_authorizations" set'];

    const hash = await device('a-device-code-for-counting', 'BCDFGHJK', 0);
    const pending = await poll('a-device-code-for-counting');
    expect(pending.result.body.error).toBe('authorization_pending');
    expect(verbs(pending.sql), pending.sql.join('\n')).toEqual(onePoll);

    // RFC 8628 §3.5: polled again within its 60 s interval.
    await device('a-slow-device-code', 'CDFGHJKL', 60);
    expect((await poll('a-slow-device-code')).result.body.error).toBe('authorization_pending');
    const slow = await poll('a-slow-device-code');
    expect(slow.result.body.error).toBe('slow_down');
    expect(verbs(slow.sql), slow.sql.join('\n')).toEqual(onePoll);

    await devices.decide(
      hash,
      { status: 'approved', userId, authTime: new Date(now), sessionId: null },
      new Date(now),
    );
    const approved = await poll('a-device-code-for-counting');
    expect(approved.result.status).toBe(200);
    expect(verbs(approved.sql), approved.sql.join('\n')).toEqual([
      ...onePoll,
      'begin',
      'update "device_authorizations" set',
      'insert into "grants"',
      'insert into "refresh_tokens"',
      'insert into "audit_events"',
      'commit',
    ]);
  });
});
