import { DEVICE_CODE_GRANT_TYPE } from '@idgate/schema';
import { createIdgateAdminClient, type IdgateAdminClient } from '@idgate/sdk';
import { decodeJwt } from 'jose';
import * as oidc from 'openid-client';
import { generateSync } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testClock } from '../helpers/app.js';
import { testDatabaseUrls } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { authorizeWithPassword, readForm, UserAgent } from '../helpers/user-agent.js';

const REDIRECT = 'https://rp.example.test/callback';
const MFA = 'urn:idgate:acr:mfa';
const SINGLE = 'urn:idgate:acr:sf';
const PASSWORD = 'battery-staple-55e1c0';

/** The key shown on an enrolment page (grouped by four, spaces dropped). */
const shownSecret = (page: string) =>
  (/<code id="totp-secret">([^<]+)<\/code>/.exec(page)?.[1] ?? '').replaceAll(' ', '');

describe.each(testDatabaseUrls())('groups and clients that require a second factor, on $name', (kind) => {
  let t: TestServer;
  const clock = testClock();
  let admin: IdgateAdminClient;
  // Two applications: `open` requires nothing of its own, `strict` requires a second factor.
  const configs: Record<'open' | 'strict', oidc.Configuration> = {} as never;
  const ids: Record<'open' | 'strict', string> = {} as never;
  // otplib computes the codes, at idgate's (injected) time.
  const code = (secret: string) => generateSync({ secret, epoch: Math.floor(clock.now() / 1000) });
  const enrolling = (page: string) => code(shownSecret(page));
  const notAsked = () => {
    throw new Error('asked for a second factor');
  };

  beforeAll(async () => {
    t = await startTestServer(kind, {}, { clock });
    admin = createIdgateAdminClient({
      baseUrl: t.baseUrl,
      apiKey: await t.addApiKey(['users:read', 'users:write', 'clients:read', 'clients:write', 'audit:read']),
    });
    await admin.createGroup({ name: 'ops', requireMfa: true });
    await t.addUser('olga', PASSWORD, { groups: ['ops'] });
    await t.addUser('pete', PASSWORD, { groups: ['ops'] });
    for (const name of ['dora', 'nick', 'sam']) await t.addUser(name, PASSWORD, { groups: ['dev'] });
    for (const which of ['open', 'strict'] as const) {
      const client = await t.addClient({
        name: which,
        grants: ['authorization_code', 'refresh_token', 'password'],
        trusted: true,
        scopes: ['openid', 'offline_access'],
        redirectUris: [REDIRECT],
      });
      ids[which] = client.clientId;
      configs[which] = await oidc.discovery(
        new URL(t.issuer),
        client.clientId,
        client.clientSecret,
        undefined,
        { execute: [oidc.allowInsecureRequests] },
      );
    }
    await admin.updateClient(ids.strict, { requireMfa: true });
  });
  afterAll(async () => t?.close());

  function authorize(
    which: 'open' | 'strict',
    agent: UserAgent,
    username: string,
    secondFactor?: (page: string) => string,
  ) {
    return authorizeWithPassword(configs[which], agent, {
      redirectUri: REDIRECT,
      redirectPrefix: REDIRECT,
      username,
      password: PASSWORD,
      ...(secondFactor === undefined ? {} : { secondFactor }),
    });
  }

  async function refused(promise: Promise<unknown>): Promise<oidc.ResponseBodyError> {
    const error = await promise.catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(oidc.ResponseBodyError);
    return error as oidc.ResponseBodyError;
  }

  it('shows both settings over REST, and audits their changes', async () => {
    expect(await admin.getGroup('ops')).toMatchObject({ requireMfa: true });
    expect(await admin.getGroup('dev')).toMatchObject({ requireMfa: false });
    expect(await admin.getClient(ids.strict)).toMatchObject({ requireMfa: true });
    expect(await admin.getClient(ids.open)).toMatchObject({ requireMfa: false });
    expect(await admin.updateGroup('dev', { requireMfa: true })).toMatchObject({ requireMfa: true });
    expect(await admin.updateGroup('dev', { requireMfa: false })).toMatchObject({ requireMfa: false });
    const events = (await admin.listEvents({ type: 'admin.changed' })).items.map(
      (e) => e.details as Record<string, unknown>,
    );
    const changes = (kind: string, id: string) =>
      events.filter((d) => d.objectKind === kind && d.objectId === id).map((d) => [d.before, d.after]);
    expect(changes('group', 'dev')).toContainEqual([{ requireMfa: false }, { requireMfa: true }]);
    expect(changes('group', 'dev')).toContainEqual([{ requireMfa: true }, { requireMfa: false }]);
    expect(changes('client', ids.strict)).toContainEqual([{ requireMfa: false }, { requireMfa: true }]);
  });

  it('asks a member of a group that requires it to enrol a TOTP authenticator, then for the code', async () => {
    let secret = '';
    const tokens = await authorize('open', new UserAgent(), 'olga', (page) => {
      secret = shownSecret(page);
      return code(secret);
    });
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(tokens.claims()).toMatchObject({ acr: MFA, amr: ['pwd', 'otp', 'mfa'] });
    expect(decodeJwt(tokens.access_token)).toMatchObject({ acr: MFA });
    clock.advance(30_000);
    let asked = false;
    const again = await authorize('open', new UserAgent(), 'olga', () => {
      asked = true;
      return code(secret);
    });
    expect(asked).toBe(true);
    expect(again.claims()).toMatchObject({ acr: MFA });
    // Someone in no such group signs in with the password alone.
    const other = await authorize('open', new UserAgent(), 'dora', notAsked);
    expect(other.claims()).toMatchObject({ acr: SINGLE, amr: ['pwd'] });
  });

  it('refuses the password grant to a member of such a group, saying why', async () => {
    const error = await refused(
      oidc.genericGrantRequest(configs.open, 'password', {
        username: 'pete',
        password: PASSWORD,
        scope: 'openid',
      }),
    );
    expect(error.error).toBe('invalid_grant');
    expect(error.error_description).toBe(
      `group ops requires a sign-in with a second factor (acr ${MFA}), which the password grant cannot ask for: use the authorization code or device flow`,
    );
    // Outside the group, the same grant goes through.
    const tokens = await oidc.genericGrantRequest(configs.open, 'password', {
      username: 'dora',
      password: PASSWORD,
      scope: 'openid',
    });
    expect(decodeJwt(tokens.access_token)).toMatchObject({ acr: SINGLE });
  });

  it('a client that requires it asks every sign-in for a second factor, a password-only session too', async () => {
    const agent = new UserAgent();
    const first = await authorize('open', agent, 'nick', notAsked);
    expect(first.claims()).toMatchObject({ acr: SINGLE });
    // The same browser, for the strict client: signed in again, enrolling on the way.
    const strict = await authorize('strict', agent, 'nick', enrolling);
    expect(strict.claims()).toMatchObject({ acr: MFA, amr: ['pwd', 'otp', 'mfa'] });
    expect(decodeJwt(strict.access_token)).toMatchObject({ acr: MFA });
    // Its refresh keeps the grant's assurance.
    const refreshed = await oidc.refreshTokenGrant(configs.strict, strict.refresh_token as string);
    expect(refreshed.claims()).toMatchObject({ acr: MFA });
    // And the password grant of that client is refused whoever asks.
    const error = await refused(
      oidc.genericGrantRequest(configs.strict, 'password', {
        username: 'dora',
        password: PASSWORD,
        scope: 'openid',
      }),
    );
    expect(error.error).toBe('invalid_grant');
    expect(error.error_description).toBe(
      `client ${ids.strict} requires a sign-in with a second factor (acr ${MFA}), which the password grant cannot ask for: use the authorization code or device flow`,
    );
  });

  it('once a client requires it, refuses the refresh of a password-only grant without burning it', async () => {
    const tokens = await authorize('open', new UserAgent(), 'sam', notAsked);
    expect(tokens.claims()).toMatchObject({ acr: SINGLE });
    await admin.updateClient(ids.open, { requireMfa: true });
    try {
      const error = await refused(oidc.refreshTokenGrant(configs.open, tokens.refresh_token as string));
      expect(error.error).toBe('invalid_grant');
      expect(error.error_description).toBe(
        `client ${ids.open} requires a sign-in with a second factor (acr ${MFA}), and this grant's sign-in had none: sign in again (authorization code or device flow) with acr_values=${MFA}`,
      );
    } finally {
      await admin.updateClient(ids.open, { requireMfa: false });
    }
    const again = await oidc.refreshTokenGrant(configs.open, tokens.refresh_token as string);
    expect(again.claims()).toMatchObject({ acr: SINGLE });
  });

  it('the device flow of a client that requires it signs the person in with a second factor', async () => {
    const device = await t.addClient({
      name: 'CLI',
      public: true,
      grants: [DEVICE_CODE_GRANT_TYPE],
      scopes: ['openid'],
    });
    await admin.updateClient(device.clientId, { requireMfa: true });
    await t.addUser('vera', PASSWORD);
    const started = await fetch(`${t.issuer}/device_authorization`, {
      method: 'POST',
      body: new URLSearchParams({ client_id: device.clientId, scope: 'openid' }),
    });
    const authorization = (await started.json()) as { device_code: string; user_code: string };
    const agent = new UserAgent();
    let answer = await agent.request(`${t.issuer}/device`, { form: { user_code: authorization.user_code } });
    const seen: string[] = [];
    for (let hop = 0; hop < 12; hop++) {
      const location = answer.headers.get('location');
      if (location !== null) {
        answer = await agent.request(new URL(location, t.issuer));
        continue;
      }
      const html = await answer.text();
      const { action, fields } = readForm(html);
      const target = new URL(action, t.issuer);
      if (html.includes('name="password"')) {
        seen.push('login');
        answer = await agent.request(target, { form: { ...fields, username: 'vera', password: PASSWORD } });
      } else if (html.includes('id="totp-secret"')) {
        seen.push('enrol');
        answer = await agent.request(target, { form: { ...fields, code: enrolling(html) } });
      } else if (html.includes('name="decision"')) {
        seen.push('confirm');
        answer = await agent.request(target, { form: { ...fields, decision: 'allow' } });
        expect(answer.status).toBe(200);
        break;
      } else {
        seen.push('other');
        answer = await agent.request(target, { form: fields });
      }
    }
    expect(seen.slice(0, 2)).toEqual(['login', 'enrol']);
    expect(seen.at(-1)).toBe('confirm');
    const polled = await fetch(`${t.issuer}/token`, {
      method: 'POST',
      body: new URLSearchParams({
        grant_type: DEVICE_CODE_GRANT_TYPE,
        device_code: authorization.device_code,
        client_id: device.clientId,
      }),
    });
    expect(polled.status).toBe(200);
    const tokens = (await polled.json()) as { access_token: string };
    expect(decodeJwt(tokens.access_token)).toMatchObject({ acr: MFA });
  });
});
