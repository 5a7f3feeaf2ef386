import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { decodeProtectedHeader } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestDatabase, testDatabaseUrls } from '../helpers/databases.js';
import { registerSecret } from '../helpers/run-record.js';
import {
  BIN,
  type InitCredentials,
  type ServeProcess,
  startServeProcesses,
  within,
} from '../helpers/serve-process.js';
import { freePort } from '../helpers/server.js';

// Incident response on two replicas sharing one PostgreSQL database: a signing key retired, or a
// not-before set, on one replica (or by the CLI) is in force on the other within a second — heard
// through the change feed, polled with a ceiling, never waited out.

const SECRET = 'replica-incident-secret-0123456789abcdefgh';
const postgres = testDatabaseUrls().find((kind) => kind.name === 'postgres');

describe.runIf(postgres !== undefined)('incident response on two replicas of one PostgreSQL', () => {
  let database: TestDatabase;
  let replicas: ServeProcess[] = [];
  let env: NodeJS.ProcessEnv;
  let creds: InitCredentials;
  const [A, B] = [0, 1];

  const cli = async (...args: string[]) =>
    (await promisify(execFile)(process.execPath, [BIN, ...args], { env })).stdout;
  const url = (replica: number) => replicas[replica]?.url as string;
  const basic = () => `Basic ${btoa(`${creds.client.clientId}:${creds.client.clientSecret}`)}`;
  const tokenRequest = (replica: number, form: Record<string, string>) =>
    fetch(`${url(replica)}/oauth/token`, {
      method: 'POST',
      headers: { authorization: basic(), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form),
    });
  const signIn = async (replica: number) =>
    (await (
      await tokenRequest(replica, {
        grant_type: 'password',
        username: creds.admin.username,
        password: creds.admin.password,
        scope: 'openid offline_access',
      })
    ).json()) as { access_token: string; refresh_token: string };
  const reviewed = async (replica: number, token: string) => {
    const response = await fetch(`${url(replica)}/oauth/authenticate`, {
      method: 'POST',
      headers: { authorization: `Bearer ${creds.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } }),
    });
    return ((await response.json()) as { status: { authenticated: boolean } }).status.authenticated;
  };
  const introspected = async (replica: number, token: string) => {
    const response = await fetch(`${url(replica)}/oauth/introspect`, {
      method: 'POST',
      headers: { authorization: basic(), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token }),
    });
    return ((await response.json()) as { active: boolean }).active;
  };
  const userinfo = async (replica: number, token: string) =>
    (await fetch(`${url(replica)}/oauth/userinfo`, { headers: { authorization: `Bearer ${token}` } })).status;
  const published = async (replica: number) =>
    ((await (await fetch(`${url(replica)}/oauth/keys`)).json()) as { keys: Array<{ kid: string }> }).keys.map(
      (key) => key.kid,
    );
  const admin = (replica: number, path: string, body?: unknown) =>
    fetch(`${url(replica)}/admin/v1${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${creds.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(body ?? {}),
    });

  beforeAll(async () => {
    database = await (postgres as NonNullable<typeof postgres>).create();
    const ports = [await freePort(), await freePort()];
    env = {
      PATH: process.env.PATH,
      IDGATE_DATABASE_URL: database.url,
      IDGATE_SECRET: SECRET,
      IDGATE_ISSUER: `http://127.0.0.1:${ports[0]}/oauth`,
      IDGATE_HOST: '127.0.0.1',
      IDGATE_LOG_LEVEL: 'warn',
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

  it('a key retired on A leaves B’s JWKS, and B refuses its tokens everywhere, within one second', async () => {
    const { access_token } = await signIn(A);
    const kid = decodeProtectedHeader(access_token).kid as string;
    // B has verified the token (and remembers that it did).
    expect(await reviewed(B, access_token)).toBe(true);
    expect(await introspected(B, access_token)).toBe(true);
    expect(await userinfo(B, access_token)).toBe(200);
    expect(await published(B)).toContain(kid);

    const retired = await admin(A, `/signing-keys/${kid}/retire`, { rotate: true });
    expect(retired.status).toBe(200);
    const { created } = (await retired.json()) as { created: { kid: string } };
    expect(await reviewed(A, access_token)).toBe(false);
    const onB = await within(1000, async () => !(await reviewed(B, access_token)));
    const jwksOnB = await within(1000 - onB, async () => !(await published(B)).includes(kid));
    console.info(
      `retired key refused on B after ${Math.round(onB)} ms, out of its JWKS ${Math.round(jwksOnB)} ms later`,
    );
    expect(await introspected(B, access_token)).toBe(false);
    expect(await userinfo(B, access_token)).toBe(401);
    // B verifies what the new key signs (it publishes it, and signs with it, at once).
    expect(await published(B)).toContain(created.kid);
    const fresh = await signIn(B);
    expect(decodeProtectedHeader(fresh.access_token).kid).toBe(created.kid);
    expect(await reviewed(A, fresh.access_token)).toBe(true);
  });

  it('a not-before set by the CLI is in force on both within one second; a global one set on B on A', async () => {
    const before = await signIn(A);
    expect(await reviewed(B, before.access_token)).toBe(true);
    await cli('not-before', 'set', '--user', creds.admin.username);
    const onB = await within(1000, async () => !(await reviewed(B, before.access_token)));
    const onA = await within(1000 - onB, async () => !(await reviewed(A, before.access_token)));
    console.info(`CLI not-before refused on B after ${Math.round(onB)} ms, on A ${Math.round(onA)} ms later`);
    expect(await introspected(B, before.access_token)).toBe(false);
    expect(await introspected(B, before.refresh_token)).toBe(false);
    const refreshed = await tokenRequest(B, {
      grant_type: 'refresh_token',
      refresh_token: before.refresh_token,
    });
    expect([refreshed.status, ((await refreshed.json()) as { error: string }).error]).toEqual([
      400,
      'invalid_grant',
    ]);

    // A token issued after it (in a later second) lives on both.
    let after = { access_token: '', refresh_token: '' };
    await within(2000, async () => {
      after = await signIn(A);
      return (await reviewed(B, after.access_token)) && (await reviewed(A, after.access_token));
    });

    const global = await admin(B, '/not-before', { scope: 'global' });
    expect(global.status).toBe(200);
    const globalOnA = await within(1000, async () => !(await reviewed(A, after.access_token)));
    console.info(`global not-before set on B refused on A after ${Math.round(globalOnA)} ms`);
    expect(await introspected(A, after.refresh_token)).toBe(false);
  });
});
