import { clusterAuthenticationConfiguration } from '@idgate/core/admin';
import { DEVICE_CODE_GRANT_TYPE } from '@idgate/schema';
import { createIdgateAdminClient, type IdgateAdminClient, IdgateHttpError } from '@idgate/sdk';
import { evaluate as evaluateCel } from '@marcbachmann/cel-js';
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
const PROD = 'kubernetes:prod';
const DEV = 'kubernetes:dev';

/** The key shown on an enrolment page (grouped by four, spaces dropped). */
const shownSecret = (page: string) =>
  (/<code id="totp-secret">([^<]+)<\/code>/.exec(page)?.[1] ?? '').replaceAll(' ', '');

describe.each(testDatabaseUrls())('clusters that require a second factor, on $name', (kind) => {
  let t: TestServer;
  const clock = testClock();
  let admin: IdgateAdminClient;
  let config: oidc.Configuration;
  const keys: Record<string, string> = {};
  const code = (secret: string) => generateSync({ secret, epoch: Math.floor(clock.now() / 1000) });

  beforeAll(async () => {
    t = await startTestServer(kind, {}, { clock });
    for (const name of ['ann', 'ben', 'cat']) await t.addUser(name, PASSWORD);
    admin = createIdgateAdminClient({
      baseUrl: t.baseUrl,
      apiKey: await t.addApiKey(['clusters:read', 'clusters:write', 'audit:read']),
    });
    const prod = await admin.createCluster({ name: 'prod', requireMfa: true });
    const dev = await admin.createCluster({ name: 'dev' });
    keys.prod = prod.apiKey;
    keys.dev = dev.apiKey;
    const client = await t.addClient({
      name: 'Console',
      grants: ['authorization_code', 'refresh_token'],
      trusted: true,
      scopes: ['openid', 'offline_access', 'groups'],
      audiences: [PROD, DEV],
      redirectUris: [REDIRECT],
    });
    config = await oidc.discovery(new URL(t.issuer), client.clientId, client.clientSecret, undefined, {
      execute: [oidc.allowInsecureRequests],
    });
  });
  afterAll(async () => t?.close());

  function authorize(
    agent: UserAgent,
    username: string,
    extra: Record<string, string>,
    secondFactor?: (page: string) => string,
  ) {
    return authorizeWithPassword(config, agent, {
      redirectUri: REDIRECT,
      redirectPrefix: REDIRECT,
      extra,
      username,
      password: PASSWORD,
      ...(secondFactor === undefined ? {} : { secondFactor }),
    });
  }

  async function review(cluster: 'prod' | 'dev', token: string) {
    const answer = await fetch(`${t.issuer}/authenticate`, {
      method: 'POST',
      headers: { authorization: `Bearer ${keys[cluster]}`, 'content-type': 'application/json' },
      body: JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } }),
    });
    expect(answer.status).toBe(200);
    return ((await answer.json()) as { status: { authenticated: boolean; error?: string } }).status;
  }

  it('shows the setting over REST, refuses a setting that is not a boolean, and audits a change', async () => {
    expect(await admin.getCluster('prod')).toMatchObject({ requireMfa: true });
    expect(await admin.getCluster('dev')).toMatchObject({ requireMfa: false });
    const bad = await admin
      .updateCluster('dev', { requireMfa: 'yes' } as unknown as { requireMfa: boolean })
      .catch((error: unknown) => error);
    expect(bad).toBeInstanceOf(IdgateHttpError);
    expect((bad as IdgateHttpError).status).toBe(400);
    expect(await admin.updateCluster('dev', { requireMfa: true })).toMatchObject({ requireMfa: true });
    expect(await admin.updateCluster('dev', { requireMfa: false })).toMatchObject({ requireMfa: false });
    const events = await admin.listEvents({ type: 'admin.changed' });
    const changes = events.items
      .map((e) => e.details as Record<string, unknown>)
      .filter((d) => d.objectKind === 'cluster' && d.objectId === 'dev')
      .map((d) => [d.before, d.after]);
    expect(changes).toContainEqual([{ requireMfa: false }, { requireMfa: true }]);
    expect(changes).toContainEqual([{ requireMfa: true }, { requireMfa: false }]);
  });

  it('asks for a second factor when the request is for such a cluster, whatever acr_values says', async () => {
    let secret = '';
    const tokens = await authorize(new UserAgent(), 'ann', { resource: PROD, acr_values: SINGLE }, (page) => {
      secret = shownSecret(page);
      return code(secret);
    });
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(decodeJwt(tokens.access_token)).toMatchObject({ aud: PROD, acr: MFA, amr: ['pwd', 'otp', 'mfa'] });
    expect(await review('prod', tokens.access_token)).toMatchObject({ authenticated: true });
    // A refresh of a grant with the second factor goes on.
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token as string, {
      resource: PROD,
    });
    expect(decodeJwt(refreshed.access_token)).toMatchObject({ acr: MFA });
  });

  it('a cluster that does not require it takes a password-only sign-in', async () => {
    const tokens = await authorize(new UserAgent(), 'ben', { resource: DEV }, () => {
      throw new Error('asked for a second factor');
    });
    expect(decodeJwt(tokens.access_token)).toMatchObject({ aud: DEV, acr: SINGLE });
    expect(await review('dev', tokens.access_token)).toMatchObject({ authenticated: true });
  });

  it('once required, refuses the refresh of a password-only grant (invalid_grant) and its token in TokenReview', async () => {
    const tokens = await authorize(new UserAgent(), 'cat', { resource: DEV });
    expect(decodeJwt(tokens.access_token)).toMatchObject({ acr: SINGLE });
    await admin.updateCluster('dev', { requireMfa: true });
    try {
      const status = await review('dev', tokens.access_token);
      expect(status.authenticated).toBe(false);
      expect(status.error).toContain('requires a sign-in with a second factor');
      const refused = await oidc
        .refreshTokenGrant(config, tokens.refresh_token as string)
        .catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(oidc.ResponseBodyError);
      expect((refused as oidc.ResponseBodyError).error).toBe('invalid_grant');
      expect((refused as oidc.ResponseBodyError).error_description).toBe(
        `cluster dev requires a sign-in with a second factor (acr ${MFA}), and this grant's sign-in had none: sign in again (authorization code or device flow) with acr_values=${MFA}`,
      );
      // The refused refresh burnt nothing: once the cluster stops requiring it, the token refreshes.
      await admin.updateCluster('dev', { requireMfa: false });
      const again = await oidc.refreshTokenGrant(config, tokens.refresh_token as string);
      expect(decodeJwt(again.access_token)).toMatchObject({ aud: DEV, acr: SINGLE });
    } finally {
      await admin.updateCluster('dev', { requireMfa: false });
    }
  });

  it('the device flow for such a cluster signs a password-only session in again with a second factor', async () => {
    const device = await t.addClient({
      name: 'CLI',
      public: true,
      grants: [DEVICE_CODE_GRANT_TYPE, 'refresh_token'],
      scopes: ['openid', 'offline_access'],
      audiences: [PROD, DEV],
    });
    await t.addUser('dan', PASSWORD);
    const agent = new UserAgent();
    // The browser has a session without a second factor (dev requires none).
    const first = await authorize(agent, 'dan', { resource: DEV });
    expect(decodeJwt(first.access_token)).toMatchObject({ acr: SINGLE });
    const started = await fetch(`${t.issuer}/device_authorization`, {
      method: 'POST',
      body: new URLSearchParams({
        client_id: device.clientId,
        scope: 'openid offline_access',
        resource: PROD,
      }),
    });
    const authorization = (await started.json()) as { device_code: string; user_code: string };
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
        answer = await agent.request(target, { form: { ...fields, username: 'dan', password: PASSWORD } });
      } else if (html.includes('id="totp-secret"')) {
        seen.push('enrol');
        answer = await agent.request(target, { form: { ...fields, code: code(shownSecret(html)) } });
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
    // The session alone did not do: the person signed in again, with a factor enrolled on the way.
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
    expect(decodeJwt(tokens.access_token)).toMatchObject({ aud: PROD, acr: MFA });
    expect(await review('prod', tokens.access_token)).toMatchObject({ authenticated: true });
    // The structured-authentication rules, evaluated by a CEL library on these real tokens' claims.
    const config = clusterAuthenticationConfiguration(
      { name: 'prod', audience: PROD, requireMfa: true },
      { issuer: 'https://id.example.com/oauth', algorithm: 'RS256' },
    );
    const rules = config.jwt[0]?.claimValidationRules ?? [];
    const accepts = (token: string) =>
      rules.every((rule) => evaluateCel(rule.expression, { claims: decodeJwt(token) }) === true);
    expect(accepts(tokens.access_token)).toBe(true);
    expect(accepts(first.access_token)).toBe(false);
  });

  it('narrows a person’s token to one of its clusters by token exchange, never wider, keeping its sign-in', async () => {
    await t.addUser('eve', PASSWORD);
    const tokens = await authorize(new UserAgent(), 'eve', { resource: DEV });
    const narrow = async (subject: string, audience: string) => {
      const answer = await fetch(`${t.issuer}/token`, {
        method: 'POST',
        body: new URLSearchParams({
          grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
          subject_token: subject,
          subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
          audience,
        }),
      });
      return { status: answer.status, body: (await answer.json()) as Record<string, string> };
    };
    const narrowed = await narrow(tokens.access_token, 'dev');
    expect(narrowed.status).toBe(200);
    expect(narrowed.body.issued_token_type).toBe('urn:ietf:params:oauth:token-type:access_token');
    const original = decodeJwt(tokens.access_token);
    const claims = decodeJwt(narrowed.body.access_token as string);
    expect(claims).toMatchObject({ aud: DEV, sub: original.sub, sid: original.sid, acr: SINGLE });
    expect(claims.exp).toBeLessThanOrEqual(original.exp as number);
    expect(await review('dev', narrowed.body.access_token as string)).toMatchObject({
      authenticated: true,
      user: { username: 'eve' },
    });
    // Each subject token once; never to a cluster the subject token was not for.
    expect((await narrow(tokens.access_token, 'dev')).body.error).toBe('invalid_grant');
    const again = await oidc.refreshTokenGrant(config, tokens.refresh_token as string);
    expect(await narrow(again.access_token, 'prod')).toMatchObject({
      status: 400,
      body: { error: 'invalid_target', error_description: expect.stringContaining('never widened') },
    });
    // A sign-in without a second factor is not narrowed to a cluster that now requires one.
    const third = await oidc.refreshTokenGrant(config, again.refresh_token as string);
    await admin.updateCluster('dev', { requireMfa: true });
    try {
      expect(await narrow(third.access_token, 'dev')).toMatchObject({
        status: 400,
        body: { error: 'invalid_target', error_description: expect.stringContaining('second factor') },
      });
    } finally {
      await admin.updateCluster('dev', { requireMfa: false });
    }
  });
});
