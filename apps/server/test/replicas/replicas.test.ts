import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestDatabase, testDatabaseUrls } from '../helpers/databases.js';
import { registerSecret } from '../helpers/run-record.js';
import { BIN, type ServeProcess, startServeProcesses, within } from '../helpers/serve-process.js';
import { freePort } from '../helpers/server.js';

const SECRET = 'replica-test-secret-0123456789abcdefghij';
const postgres = testDatabaseUrls().find((kind) => kind.name === 'postgres');

describe.runIf(postgres !== undefined)('several replicas on one PostgreSQL database', () => {
  let database: TestDatabase;
  let replicas: ServeProcess[] = [];
  let env: NodeJS.ProcessEnv;
  let creds: {
    apiKey: string;
    admin: { username: string; password: string };
    client: { clientId: string; clientSecret: string };
  };
  let issuer: string;

  const cli = async (...args: string[]) =>
    (await promisify(execFile)(process.execPath, [BIN, ...args], { env })).stdout;

  beforeAll(async () => {
    database = await (postgres as NonNullable<typeof postgres>).create();
    const ports = [await freePort(), await freePort(), await freePort()];
    issuer = `http://127.0.0.1:${ports[0]}/oauth`;
    env = {
      PATH: process.env.PATH,
      IDGATE_DATABASE_URL: database.url,
      IDGATE_SECRET: SECRET,
      IDGATE_ISSUER: issuer,
      IDGATE_HOST: '127.0.0.1',
      IDGATE_LOG_LEVEL: 'warn',
      IDGATE_LOGIN_MAX_FAILURES: '3',
      IDGATE_DEVICE_MAX_WRONG_CODES: '4',
    };
    creds = JSON.parse(await cli('init', '--json'));
    registerSecret('API key', creds.apiKey);
    registerSecret('password', creds.admin.password);
    registerSecret('client secret', creds.client.clientSecret);
    replicas = await startServeProcesses(env, ports, { readyWithinMs: 45_000 });
  }, 60_000);

  afterAll(async () => {
    await Promise.all(replicas.map((replica) => replica.stop()));
    await database?.drop();
  });

  const [A, B, C] = [0, 1, 2];
  const basic = () => `Basic ${btoa(`${creds.client.clientId}:${creds.client.clientSecret}`)}`;
  const passwordGrant = (replica: number, username = creds.admin.username, password = creds.admin.password) =>
    fetch(`${replicas[replica]?.url}/oauth/token`, {
      method: 'POST',
      headers: { authorization: basic(), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'password', username, password, scope: 'openid' }),
    });
  const token = async (replica: number) =>
    ((await (await passwordGrant(replica)).json()) as { access_token: string }).access_token;
  const authenticated = async (replica: number, accessToken: string) => {
    const response = await fetch(`${replicas[replica]?.url}/oauth/authenticate`, {
      method: 'POST',
      headers: { authorization: `Bearer ${creds.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenReview',
        spec: { token: accessToken },
      }),
    });
    return ((await response.json()) as { status: { authenticated: boolean } }).status.authenticated;
  };

  it('a token revoked on A is refused by B and C within one second', async () => {
    const accessToken = await token(A);
    expect(await authenticated(B, accessToken)).toBe(true);
    expect(await authenticated(C, accessToken)).toBe(true);
    const revoked = await fetch(`${replicas[A]?.url}/oauth/revoke`, {
      method: 'POST',
      headers: { authorization: basic(), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: accessToken }),
    });
    expect(revoked.status).toBe(200);
    // Each replica on its own clock from the revocation: C may hear of it a moment after B.
    const onB = await within(1000, async () => !(await authenticated(B, accessToken)));
    await within(1000 - onB, async () => !(await authenticated(C, accessToken)));
  });

  it('a user disabled by the CLI is refused by every replica within one second, and signs in again once enabled', async () => {
    const accessToken = await token(B);
    expect(await authenticated(C, accessToken)).toBe(true);
    await cli('users', 'disable', creds.admin.username);
    await within(1000, async () => !(await authenticated(C, accessToken)));
    await within(1000, async () => !(await authenticated(A, accessToken)));
    await cli('users', 'enable', creds.admin.username);
    // Disabling revoked the user's grants: the old token stays refused, a new sign-in works on
    // every replica as soon as they hear of the enabling.
    let fresh = '';
    await within(1000, async () => {
      fresh = (await token(B).catch(() => undefined)) ?? '';
      return fresh !== '' && (await authenticated(C, fresh));
    });
    expect(await authenticated(A, accessToken)).toBe(false);
  });

  it('a key rotated by the CLI is in B’s JWKS within one second, and old tokens still verify', async () => {
    const before = await token(A);
    const rotated = JSON.parse(await cli('keys', 'rotate', '--json')) as { created: { kid: string } };
    await within(1000, async () => {
      const jwks = (await (await fetch(`${replicas[B]?.url}/oauth/keys`)).json()) as {
        keys: Array<{ kid: string }>;
      };
      return jwks.keys.some((key) => key.kid === rotated.created.kid);
    });
    expect(await authenticated(B, before)).toBe(true);
  });

  it('an account locked on A is locked on B', async () => {
    await cli('users', 'add', 'mallory-target');
    for (let i = 0; i < 3; i++)
      expect((await passwordGrant(A, 'mallory-target', `wrong-${i}`)).status).toBe(400);
    const onB = await passwordGrant(B, 'mallory-target', 'anything');
    expect(onB.status).toBe(429);
    expect(onB.headers.get('retry-after')).not.toBeNull();
  });

  it('wrong device codes typed on A and B count toward the budget of all addresses on C', async () => {
    const enter = (replica: number) =>
      fetch(`${replicas[replica]?.url}/oauth/device`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ user_code: 'BCDF-BCDF' }),
      });
    for (const replica of [A, A, B, B]) expect((await enter(replica)).status).toBe(400);
    const onC = await enter(C);
    expect(onC.status).toBe(429);
    expect(onC.headers.get('retry-after')).not.toBeNull();
    expect(await onC.text()).toContain('no code is accepted for now');
  });

  it('an API key revoked by the CLI is refused by every replica within one second', async () => {
    const created = JSON.parse(
      await cli('api-keys', 'add', '--name', 'apiserver-2', '--scope', 'tokenreview', '--json'),
    ) as { key: string; prefix: string };
    registerSecret('API key', created.key);
    const review = (replica: number) =>
      fetch(`${replicas[replica]?.url}/oauth/authenticate`, {
        method: 'POST',
        headers: { authorization: `Bearer ${created.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          apiVersion: 'authentication.k8s.io/v1',
          kind: 'TokenReview',
          spec: { token: 'x' },
        }),
      });
    expect((await review(B)).status).toBe(200);
    await cli('api-keys', 'revoke', created.prefix);
    await within(1000, async () => (await review(B)).status === 401);
    expect((await review(C)).status).toBe(401);
  });

  it('a client removed by the CLI loses its tokens and its token endpoint on every replica', async () => {
    const created = JSON.parse(
      await cli('clients', 'add', '--name', 'short-lived', '--grant', 'client_credentials', '--json'),
    ) as {
      clientId: string;
      clientSecret: string;
    };
    registerSecret('client secret', created.clientSecret);
    const grant = (replica: number) =>
      fetch(`${replicas[replica]?.url}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: created.clientId,
          client_secret: created.clientSecret,
        }),
      });
    const response = await grant(A);
    const { access_token } = (await response.json()) as { access_token: string };
    // Every replica has now read the client (the token endpoint keeps it in memory).
    expect((await grant(B)).status).toBe(200);
    expect((await grant(C)).status).toBe(200);
    expect(await authenticated(C, access_token)).toBe(true);
    await cli('clients', 'remove', created.clientId);
    await within(1000, async () => !(await authenticated(C, access_token)));
    await within(1000, async () => (await grant(B)).status === 401);
    expect((await grant(C)).status).toBe(401);
    expect((await grant(A)).status).toBe(401);
  });
});

describe.runIf(postgres !== undefined)('replicas starting together on an empty PostgreSQL database', () => {
  it('create exactly one signing key between them', async () => {
    const database = await (postgres as NonNullable<typeof postgres>).create();
    const ports = [await freePort(), await freePort(), await freePort()];
    const env = {
      PATH: process.env.PATH,
      IDGATE_DATABASE_URL: database.url,
      IDGATE_SECRET: SECRET,
      IDGATE_ISSUER: `http://127.0.0.1:${ports[0]}/oauth`,
      IDGATE_HOST: '127.0.0.1',
      IDGATE_LOG_LEVEL: 'warn',
    };
    let children: ServeProcess[] = [];
    try {
      children = await startServeProcesses(env, ports, { readyWithinMs: 45_000 });
      const kids = await Promise.all(
        ports.map(async (port) =>
          (
            (await (await fetch(`http://127.0.0.1:${port}/oauth/keys`)).json()) as {
              keys: Array<{ kid: string }>;
            }
          ).keys.map((k) => k.kid),
        ),
      );
      expect(kids[0]).toHaveLength(1);
      expect(kids[1]).toEqual(kids[0]);
      expect(kids[2]).toEqual(kids[0]);
      const listed = JSON.parse(
        (await promisify(execFile)(process.execPath, [BIN, 'keys', 'list', '--json'], { env })).stdout,
      ) as unknown[];
      expect(listed).toHaveLength(1);
    } finally {
      await Promise.all(children.map((child) => child.stop()));
      await database.drop();
    }
  }, 60_000);
});
