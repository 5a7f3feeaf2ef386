import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabaseUrls } from '../helpers/databases.js';
import { addIdentityProvider } from '../helpers/federation.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { corpLdapProvider, hasSlapd, PEOPLE_DN, type Slapd, startSlapd } from '../helpers/slapd.js';
import { readForm, UserAgent } from '../helpers/user-agent.js';

const RP = 'https://rp.example.test/cb';

describe.skipIf(!hasSlapd).each(testDatabaseUrls())('sign-in with LDAP passwords on $name', (kind) => {
  let t: TestServer;
  let slapd: Slapd;
  let client: { clientId: string; clientSecret: string };
  let reviewKey: string;

  beforeAll(async () => {
    slapd = await startSlapd();
    t = await startTestServer(kind, {
      bruteForce: { maxFailures: 3, windowSeconds: 900, maxFailuresPerAddress: 1000 },
    });
    client = await t.addClient({
      grants: ['password', 'authorization_code'],
      trusted: true,
      scopes: ['openid', 'groups'],
      redirectUris: [RP],
    });
    reviewKey = await t.addApiKey(['tokenreview']);
    await addIdentityProvider(t, corpLdapProvider(slapd, { displayName: 'Corporate directory' }));
  });
  afterAll(async () => {
    await t?.close();
    await slapd?.stop();
  });

  const grant = (username: string, password: string) =>
    fetch(`${t.issuer}/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${btoa(`${client.clientId}:${client.clientSecret}`)}`,
      },
      body: new URLSearchParams({
        grant_type: 'password',
        provider: 'corp-ldap',
        username,
        password,
        scope: 'openid groups',
      }),
    });
  const review = async (token: string) =>
    (
      (await (
        await fetch(`${t.issuer}/authenticate`, {
          method: 'POST',
          headers: { authorization: `Bearer ${reviewKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({
            apiVersion: 'authentication.k8s.io/v1',
            kind: 'TokenReview',
            spec: { token },
          }),
        })
      ).json()) as {
        status: { authenticated: boolean; user?: { username: string; groups: string[] } };
      }
    ).status;

  it('the password grant takes provider=corp-ldap; directory groups reach TokenReview', async () => {
    const response = await grant('alice', 'alice-pass');
    expect(response.status).toBe(200);
    const { access_token } = (await response.json()) as { access_token: string };
    expect((await review(access_token)).user).toMatchObject({
      username: 'alice',
      groups: ['corp-ldap:admins', 'corp-ldap:devs'],
    });
    const records = await t.server.services.storage.loginAttempts.listByUsername('alice', 1);
    expect(records[0]).toMatchObject({ provider: 'corp-ldap', success: true });
  });

  it.each([
    ['a wrong password', 'alice', 'nope'],
    ['an unknown user', 'nobody', 'whatever'],
    ['a filter injection attempt', '*)(uid=*', 'alice-pass'],
  ])('refuses %s with the generic invalid_grant', async (_name, username, password) => {
    const response = await grant(username, password);
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      error: 'invalid_grant',
      error_description: 'invalid username or password',
    });
  });

  it('records each directory bind as an upstream sign-in beside the sign-in, never the password', async () => {
    const all = () => t.server.services.storage.auditEvents.list({ limit: 1000 });
    const before = (await all()).length;
    expect((await grant('dave', 'not-daves-password-81')).status).toBe(400);
    expect((await grant('dave', 'dave-pass')).status).toBe(200);
    // The login page, as a browser sends it.
    const agent = new UserAgent();
    const params = new URLSearchParams({
      client_id: client.clientId,
      redirect_uri: RP,
      response_type: 'code',
      scope: 'openid',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    });
    const toLogin = await agent.request(`${t.issuer}/authorize?${params}`);
    const page = await agent.request(new URL(toLogin.headers.get('location') as string, t.issuer));
    const { action, fields } = readForm(await page.text());
    const signedIn = await agent.request(new URL(action, t.issuer), {
      form: { ...fields, provider: 'corp-ldap', username: 'Dave', password: 'dave-pass' },
    });
    expect(signedIn.status).toBe(303);

    const events = (await all())
      .slice(before)
      .filter((e) => e.type !== 'token.issued' && e.type !== 'code.issued');
    const daveId = (await t.server.services.storage.users.findByUsername('dave'))?.id;
    const signIn = (channel: string, reason: string | null) => ({
      method: 'ldap',
      provider: 'corp-ldap',
      channel,
      username: 'dave',
      reason,
      // The directory's groups, all kept, once its bind succeeded.
      groupsDropped: reason === null ? 0 : null,
    });
    expect(events.map((e) => [e.type, e.outcome, e.subject, e.clientId, e.details])).toEqual([
      [
        'upstream.sign-in',
        'failure',
        null,
        client.clientId,
        { provider: 'corp-ldap', reason: 'invalid_credentials' },
      ],
      ['sign-in.failed', 'failure', null, client.clientId, signIn('password-grant', 'invalid_credentials')],
      ['upstream.sign-in', 'success', daveId, client.clientId, { provider: 'corp-ldap', reason: null }],
      ['sign-in.succeeded', 'success', daveId, client.clientId, signIn('password-grant', null)],
      // The login page's sign-in names the client of the authorization request it serves.
      ['upstream.sign-in', 'success', daveId, client.clientId, { provider: 'corp-ldap', reason: null }],
      ['sign-in.succeeded', 'success', daveId, client.clientId, signIn('browser', null)],
    ]);
    expect(events.map((e) => e.actor)).toEqual([
      { kind: 'user', id: null, name: 'dave' },
      { kind: 'user', id: null, name: 'dave' },
      { kind: 'user', id: daveId, name: 'dave' },
      { kind: 'user', id: daveId, name: 'dave' },
      { kind: 'user', id: daveId, name: 'dave' },
      { kind: 'user', id: daveId, name: 'dave' },
    ]);
    expect(JSON.stringify(await all())).not.toMatch(/dave-pass|not-daves-password/);
  });

  it('refuses an unknown provider name', async () => {
    const response = await fetch(`${t.issuer}/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${btoa(`${client.clientId}:${client.clientSecret}`)}`,
      },
      body: new URLSearchParams({
        grant_type: 'password',
        provider: 'nope',
        username: 'alice',
        password: 'alice-pass',
      }),
    });
    expect(await response.json()).toMatchObject({ error: 'invalid_request' });
  });

  it('logs why the directory refused a sign-in, never the password', async () => {
    expect((await grant('carol', 'not-alices-password-71')).status).toBe(400);
    expect((await grant('nobody-here', 'not-alices-password-72')).status).toBe(400);
    const refused = t.logs
      .map(
        (line) => JSON.parse(line) as { msg: string; provider?: string; username?: string; reason?: string },
      )
      .filter((entry) => entry.msg === 'directory sign-in refused');
    expect(refused.map(({ provider, username, reason }) => ({ provider, username, reason }))).toEqual(
      expect.arrayContaining([
        {
          provider: 'corp-ldap',
          username: 'alice',
          reason: expect.stringMatching(
            /^the directory refused the password for uid=alice,.* \(invalid credentials\)$/,
          ),
        },
        {
          provider: 'corp-ldap',
          username: 'nobody-here',
          reason: `no entry under ${PEOPLE_DN} matches the user search`,
        },
      ]),
    );
    expect(t.logs.join('\n')).not.toMatch(/not-alices-password-7/);
  });

  it('locks an LDAP account after repeated failures too', async () => {
    for (let i = 0; i < 3; i++) expect((await grant('bob', `wrong-${i}`)).status).toBe(400);
    const locked = await grant('bob', 'bob-pass');
    expect(locked.status).toBe(429);
    expect(locked.headers.get('retry-after')).not.toBeNull();
  });

  it('offers the directory on the login page and signs in with it', async () => {
    const agent = new UserAgent();
    const params = new URLSearchParams({
      client_id: client.clientId,
      redirect_uri: RP,
      response_type: 'code',
      scope: 'openid groups',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    });
    const toLogin = await agent.request(`${t.issuer}/authorize?${params}`);
    const page = await agent.request(new URL(toLogin.headers.get('location') as string, t.issuer));
    const html = await page.text();
    expect(html).toContain('<option value="corp-ldap">Corporate directory</option>');
    const { action, fields } = readForm(html);
    const wrong = await agent.request(new URL(action, t.issuer), {
      form: { ...fields, provider: 'corp-ldap', username: 'alice', password: 'bad' },
    });
    expect(wrong.status).toBe(401);
    const wrongHtml = await wrong.text();
    expect(wrongHtml).toContain('Invalid username or password.');
    expect(wrongHtml).toContain('<option value="corp-ldap" selected>');
    const ok = await agent.request(new URL(action, t.issuer), {
      form: { ...fields, provider: 'corp-ldap', username: 'alice', password: 'alice-pass' },
    });
    expect(ok.status).toBe(303);
    expect(new URL(ok.headers.get('location') as string).searchParams.get('code')).toEqual(
      expect.any(String),
    );
  });

  it('says the directory is unreachable when it is down, never "wrong password"', async () => {
    await addIdentityProvider(t, {
      type: 'ldap',
      name: 'down-ldap',
      url: 'ldap://127.0.0.1:9',
      userSearch: { baseDn: PEOPLE_DN },
      timeoutMs: 500,
    });
    const response = await fetch(`${t.issuer}/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${btoa(`${client.clientId}:${client.clientSecret}`)}`,
      },
      body: new URLSearchParams({
        grant_type: 'password',
        provider: 'down-ldap',
        username: 'alice',
        password: 'alice-pass',
      }),
    });
    expect(response.status).toBe(503);
    expect(await response.json()).toMatchObject({ error: 'temporarily_unavailable' });
    const failed = t.logs
      .map((line) => JSON.parse(line) as { msg: string; provider?: string; code?: string; reason?: string })
      .find((entry) => entry.msg === 'directory sign-in failed' && entry.provider === 'down-ldap');
    expect(failed).toMatchObject({ code: 'upstream_unavailable', reason: 'the directory did not answer' });
    expect(t.logs.join('\n')).not.toContain('alice-pass');
  });
});
