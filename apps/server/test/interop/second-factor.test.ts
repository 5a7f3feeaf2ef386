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

describe.each(testDatabaseUrls())('second factors seen by openid-client on $name', (kind) => {
  let t: TestServer;
  const clock = testClock();
  let client: { clientId: string; clientSecret: string };
  let config: oidc.Configuration;
  // otplib computes the codes, at idgate's (injected) time.
  const code = (secret: string) => generateSync({ secret, epoch: Math.floor(clock.now() / 1000) });

  beforeAll(async () => {
    t = await startTestServer(kind, {}, { clock });
    for (const name of ['erin', 'fred', 'gina', 'hugo', 'ivan']) await t.addUser(name, PASSWORD);
    client = await t.addClient({
      name: 'Dashboard',
      grants: ['authorization_code', 'refresh_token', 'password'],
      trusted: true,
      scopes: ['openid', 'offline_access'],
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
    extra: Record<string, string> = {},
    secondFactor?: (page: string) => string,
    recoveryCodes?: (codes: string[]) => void,
  ) {
    return authorizeWithPassword(config, agent, {
      redirectUri: REDIRECT,
      redirectPrefix: REDIRECT,
      extra,
      username,
      password: PASSWORD,
      ...(secondFactor === undefined ? {} : { secondFactor }),
      ...(recoveryCodes === undefined ? {} : { recoveryCodes }),
    });
  }

  /** Enrols a TOTP authenticator for `username` through acr_values; its key and recovery codes. */
  async function enrol(username: string) {
    let secret = '';
    let codes: string[] = [];
    const tokens = await authorize(
      new UserAgent(),
      username,
      { acr_values: MFA },
      (page) => {
        secret = shownSecret(page);
        return code(secret);
      },
      (shown) => {
        codes = shown;
      },
    );
    return { tokens, secret, codes };
  }

  it('advertises the acr values and the acr and amr claims', () => {
    const metadata = config.serverMetadata();
    expect(metadata.acr_values_supported).toEqual([MFA, SINGLE]);
    expect(metadata.claims_supported).toEqual(expect.arrayContaining(['acr', 'amr']));
  });

  it('says a password sign-in is single factor, in the ID token and the access token', async () => {
    const tokens = await authorize(new UserAgent(), 'erin');
    expect(tokens.claims()).toMatchObject({ acr: SINGLE, amr: ['pwd'] });
    expect(decodeJwt(tokens.access_token)).toMatchObject({ acr: SINGLE, amr: ['pwd'] });
  });

  it('enrols a TOTP authenticator when acr_values asks for MFA, and asserts it; a refresh keeps it', async () => {
    const { tokens, secret, codes } = await enrol('fred');
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(codes).toHaveLength(10);
    const claims = tokens.claims();
    expect(claims).toMatchObject({ acr: MFA, amr: ['pwd', 'otp', 'mfa'] });
    expect(typeof claims?.auth_time).toBe('number');
    expect(decodeJwt(tokens.access_token)).toMatchObject({ acr: MFA, amr: ['pwd', 'otp', 'mfa'] });
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token as string);
    expect(refreshed.claims()).toMatchObject({
      acr: MFA,
      amr: ['pwd', 'otp', 'mfa'],
      auth_time: claims?.auth_time,
    });
  });

  it('asks an enrolled user for the code at every sign-in, refuses a replayed one, takes a recovery code once', async () => {
    const { secret, codes } = await enrol('gina');
    clock.advance(30_000);
    const typed = code(secret);
    const tokens = await authorize(new UserAgent(), 'gina', {}, () => typed);
    expect(tokens.claims()).toMatchObject({ acr: MFA, amr: ['pwd', 'otp', 'mfa'] });
    // The same code in another browser: refused.
    await expect(authorize(new UserAgent(), 'gina', {}, () => typed)).rejects.toThrow(
      /second factor refused with 401/,
    );
    const recovery = codes[0] as string;
    const recovered = await authorize(new UserAgent(), 'gina', {}, () => recovery);
    expect(recovered.claims()).toMatchObject({ acr: MFA, amr: ['pwd', 'otp', 'mfa'] });
    await expect(authorize(new UserAgent(), 'gina', {}, () => recovery)).rejects.toThrow(
      /second factor refused with 401/,
    );
  });

  it('signs a single-factor session in again when acr_values asks for MFA', async () => {
    const agent = new UserAgent();
    const first = await authorize(agent, 'hugo');
    expect(first.claims()).toMatchObject({ acr: SINGLE });
    let asked = false;
    const second = await authorize(agent, 'hugo', { acr_values: MFA }, (page) => {
      asked = true;
      return code(shownSecret(page));
    });
    expect(asked).toBe(true);
    expect(second.claims()).toMatchObject({ acr: MFA });
    // The session now has the second factor: another MFA request needs no sign-in at all.
    clock.advance(30_000);
    const third = await authorize(agent, 'hugo', { acr_values: MFA }, () => {
      throw new Error('asked again');
    });
    expect(third.claims()).toMatchObject({ acr: MFA });
  });

  it('locks the second-factor page after five wrong codes: 429 with Retry-After, even for the right code', async () => {
    const { secret } = await enrol('ivan');
    clock.advance(30_000);
    const agent = new UserAgent();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT,
      scope: 'openid',
      code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
      code_challenge_method: 'S256',
    });
    let page = await agent.request(url);
    while (page.status === 303)
      page = await agent.request(new URL(page.headers.get('location') as string, t.issuer));
    const login = readForm(await page.text());
    let answer = await agent.request(new URL(login.action, t.issuer), {
      form: { ...login.fields, username: 'ivan', password: PASSWORD },
    });
    const stepUrl = new URL(answer.headers.get('location') as string, t.issuer);
    const step = readForm(await (await agent.request(stepUrl)).text());
    const statuses: number[] = [];
    for (const typed of ['000000', '111111', '222222', '333333', '444444', code(secret)]) {
      answer = await agent.request(new URL(step.action, t.issuer), { form: { ...step.fields, code: typed } });
      statuses.push(answer.status);
    }
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429]);
    expect(Number(answer.headers.get('retry-after'))).toBeGreaterThan(0);
    // After the window, a new sign-in takes the right code (this one's interaction has expired).
    clock.advance(15 * 60_000 + 1000);
    const tokens = await authorize(new UserAgent(), 'ivan', {}, () => code(secret));
    expect(tokens.claims()).toMatchObject({ acr: MFA });
  });

  it('refuses the password grant to a user with a second factor, saying why', async () => {
    await enrol('erin');
    const answer = await fetch(`${t.issuer}/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${btoa(`${client.clientId}:${client.clientSecret}`)}`,
      },
      body: new URLSearchParams({
        grant_type: 'password',
        username: 'erin',
        password: PASSWORD,
        scope: 'openid',
      }),
    });
    expect(answer.status).toBe(400);
    expect(await answer.json()).toMatchObject({
      error: 'invalid_grant',
      error_description: expect.stringContaining('second factor'),
    });
  });
});
