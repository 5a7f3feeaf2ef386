import { hashSecret } from '@idgate/core';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { testDatabaseUrls } from '../helpers/databases.js';

// The grant steps' round trips to PostgreSQL, counted at the driver: a claim comes back from its
// own update (RETURNING) instead of a re-read, and the user comes from the directory's memory.
// Only the statements on the grant's own tables are counted, so writes other features add to
// these steps (audit events, for instance) do not change the figures.
const statements: string[] = [];
let counting = false;
const query = pg.Client.prototype.query;
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  if (counting) {
    const first = args[0] as string | { text?: string };
    statements.push(typeof first === 'string' ? first : (first.text ?? ''));
  }
  return (query as (...a: unknown[]) => unknown).apply(this, args);
} as typeof query;

const GRANT_TABLES =
  /"(refresh_tokens|authorization_codes|device_authorizations|grants|users|linked_identities)"/;
const REDIRECT = 'https://app.example.com/cb';
const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

const postgres = testDatabaseUrls().filter((kind) => kind.name === 'postgres');

describe.each(postgres)('statements per grant step on $name', (kind) => {
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
  /** The statements on the grant tables that `work` ran. */
  const counted = async <T>(work: () => Promise<T>): Promise<{ result: T; sql: string[] }> => {
    statements.length = 0;
    counting = true;
    try {
      const result = await work();
      return { result, sql: statements.filter((text) => GRANT_TABLES.test(text)) };
    } finally {
      counting = false;
    }
  };
  const verbs = (sql: string[]) => sql.map((text) => text.split(' ').slice(0, 3).join(' '));

  it('a refresh rotation reads the token, claims it, records the grant use and stores the successor', async () => {
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
    expect(verbs(sql)).toEqual([
      'select * from',
      'update "refresh_tokens" set',
      'update "grants" set',
      'insert into "refresh_tokens"',
    ]);
  });

  it('a code exchange claims the code, opens the grant, attaches it and stores the refresh token', async () => {
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
    expect(verbs(sql)).toEqual([
      'update "authorization_codes" set',
      'insert into "grants"',
      'update "authorization_codes" set',
      'insert into "refresh_tokens"',
    ]);
  });

  it('a device poll reads the code; the approved one is claimed in one statement', async () => {
    const deviceCode = 'a-device-code-for-counting';
    const hash = await hashSecret(deviceCode);
    const now = Date.now();
    const devices = t.services.storage.deviceAuthorizations;
    await devices.create({
      deviceCodeHash: hash,
      userCode: 'BCDFGHJK',
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
      interval: 0,
      consumedAt: null,
    });
    const pending = await counted(() => token({ grant_type: DEVICE_GRANT, device_code: deviceCode }));
    expect(pending.result.body.error).toBe('authorization_pending');
    expect(verbs(pending.sql)).toEqual(['select * from', 'update "device_authorizations" set']);

    await devices.decide(
      hash,
      { status: 'approved', userId, authTime: new Date(now), sessionId: null },
      new Date(now),
    );
    const approved = await counted(() => token({ grant_type: DEVICE_GRANT, device_code: deviceCode }));
    expect(approved.result.status).toBe(200);
    expect(verbs(approved.sql)).toEqual([
      'select * from',
      'update "device_authorizations" set',
      'insert into "grants"',
      'insert into "refresh_tokens"',
    ]);
  });
});
