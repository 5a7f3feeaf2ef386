import * as oidc from 'openid-client';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/storage/index.js';
import { testDatabaseUrls } from '../helpers/databases.js';
import { addIdentityProvider } from '../helpers/federation.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startUpstreamOidc, type UpstreamOidc } from '../helpers/upstream-oidc.js';
import { readForm, signIn, UserAgent } from '../helpers/user-agent.js';

const RP = 'https://rp.example.test/cb';

describe.each(testDatabaseUrls())('sign-in through an upstream OpenID Connect provider on $name', (kind) => {
  let t: TestServer;
  let upstream: UpstreamOidc;
  let tokenClient: { clientId: string; clientSecret: string };
  let rp: { clientId: string; clientSecret: string };
  let reviewKey: string;

  beforeAll(async () => {
    t = await startTestServer(kind);
    upstream = await startUpstreamOidc({
      redirectUris: [
        `${t.issuer}/callback/corp`,
        `${t.issuer}/callback/corp-lookup`,
        `${t.issuer}/callback/corp-manual`,
      ],
    });
    upstream.accounts.set('u-100', {
      sub: 'u-100',
      preferred_username: 'Alice.Smith',
      email: 'alice@corp.test',
      email_verified: true,
      name: 'Alice Smith',
      groups: ['engineering', 'system:masters'],
    });
    upstream.accounts.set('u-200', {
      sub: 'u-200',
      preferred_username: 'bob',
      email: 'bob@corp.test',
      email_verified: false,
      groups: [],
    });
    tokenClient = await t.addClient({
      name: 'kubectl',
      grants: ['authorization_code', 'refresh_token'],
      trusted: true,
      scopes: ['openid', 'profile', 'email', 'groups', 'offline_access'],
    });
    rp = await t.addClient({
      name: 'Wiki',
      grants: ['authorization_code'],
      scopes: ['openid', 'groups'],
      redirectUris: [RP],
    });
    reviewKey = await t.addApiKey(['tokenreview']);
    const base = {
      type: 'oidc' as const,
      issuer: upstream.issuer,
      clientId: upstream.clientId,
      clientSecret: upstream.clientSecret,
      scopes: ['openid', 'profile', 'email', 'groups'],
    };
    await addIdentityProvider(t, {
      ...base,
      name: 'corp',
      displayName: 'Corp SSO',
      tokenClientId: tokenClient.clientId,
    });
    await addIdentityProvider(t, {
      ...base,
      name: 'corp-lookup',
      mapping: 'lookup',
      linkByVerifiedEmail: true,
      tokenClientId: tokenClient.clientId,
    });
    await addIdentityProvider(t, {
      ...base,
      name: 'corp-manual',
      mapping: 'manual',
      tokenClientId: tokenClient.clientId,
    });
  });
  afterAll(async () => {
    await upstream?.stop();
    await t?.close();
  });
  beforeEach(() => {
    upstream.nextAccount = 'u-100';
  });

  const account = (subject: string) => {
    const found = upstream.accounts.get(subject);
    if (found === undefined) throw new Error(`the upstream has no account ${subject}`);
    return found;
  };
  const userNamed = async (username: string) => {
    const user = await t.server.services.storage.users.findByUsername(username);
    if (user === undefined) throw new Error(`idgate has no user ${username}`);
    return user;
  };

  /** Follows /oauth/login/{idp} through the upstream and back; returns idgate's callback answer. */
  async function viaUpstream(agent: UserAgent, start: string): Promise<Response> {
    let response = await agent.request(start);
    for (let hop = 0; hop < 12; hop++) {
      const location = response.headers.get('location');
      if (location === null) return response;
      const next = new URL(location, response.url || start);
      if (next.toString().startsWith(`${t.issuer}/callback/`)) return agent.request(next);
      response = await agent.request(next);
    }
    throw new Error('too many redirects');
  }

  /** Goes through the upstream's sign-in up to the callback to idgate, which it does not follow. */
  async function callbackUrl(agent: UserAgent): Promise<URL> {
    let response = await agent.request(`${t.issuer}/login/corp`);
    for (let hop = 0; hop < 12; hop++) {
      const next = new URL(response.headers.get('location') as string, response.url || t.issuer);
      if (next.toString().startsWith(`${t.issuer}/callback/`)) return next;
      response = await agent.request(next);
    }
    throw new Error('too many redirects');
  }

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
      ).json()) as { status: { authenticated: boolean; user?: { username: string; groups: string[] } } }
    ).status;

  it('code form: answers the token response, creates the user, and its groups reach TokenReview', async () => {
    const response = await viaUpstream(new UserAgent(), `${t.issuer}/login/corp`);
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const tokens = (await response.json()) as Record<string, string | number>;
    expect(Object.keys(tokens).sort()).toEqual([
      'access_token',
      'expires_in',
      'id_token',
      'refresh_token',
      'scope',
      'token_type',
    ]);
    expect(tokens.token_type).toBe('Bearer');
    const status = await review(tokens.access_token as string);
    expect(status.authenticated).toBe(true);
    expect(status.user?.username).toBe('alice.smith');
    // Prefixed with the provider's name, and an upstream can never claim system:masters.
    expect(status.user?.groups).toEqual(['corp:engineering', 'corp:system:masters']);
    const identities = await t.server.services.storage.identities.listByUser(
      (await userNamed('alice.smith')).id,
    );
    expect(identities).toMatchObject([
      { provider: 'corp', subject: 'u-100', groups: ['corp:engineering', 'corp:system:masters'] },
    ]);
  });

  it('refreshes groups at every sign-in', async () => {
    upstream.accounts.set('u-100', { ...account('u-100'), groups: ['platform'] });
    try {
      const response = await viaUpstream(new UserAgent(), `${t.issuer}/login/corp`);
      const { access_token } = (await response.json()) as { access_token: string };
      expect((await review(access_token)).user?.groups).toEqual(['corp:platform']);
    } finally {
      upstream.accounts.set('u-100', {
        ...account('u-100'),
        groups: ['engineering', 'system:masters'],
      });
    }
  });

  it('continues a pending authorization request: login page button → upstream → consent → client', async () => {
    const agent = new UserAgent();
    const verifier = oidc.randomPKCECodeVerifier();
    const params = new URLSearchParams({
      client_id: rp.clientId,
      redirect_uri: RP,
      response_type: 'code',
      scope: 'openid groups',
      state: 'rp-state',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    const toLogin = await agent.request(`${t.issuer}/authorize?${params}`);
    const loginPage = await agent.request(new URL(toLogin.headers.get('location') as string, t.issuer));
    const html = await loginPage.text();
    const button = /<a href="([^"]+)">Sign in with Corp SSO<\/a>/.exec(html)?.[1];
    expect(button).toBeDefined();
    const back = await viaUpstream(
      agent,
      new URL((button as string).replace(/&amp;/g, '&'), t.issuer).toString(),
    );
    expect(back.status).toBe(303);
    const consent = await agent.request(new URL(back.headers.get('location') as string, t.issuer));
    const form = readForm(await consent.text());
    const done = await agent.request(new URL(form.action, t.issuer), {
      form: { ...form.fields, decision: 'allow' },
    });
    const callback = new URL(done.headers.get('location') as string);
    expect(`${callback.origin}${callback.pathname}`).toBe(RP);
    expect(callback.searchParams.get('state')).toBe('rp-state');
    expect(callback.searchParams.get('code')).toEqual(expect.any(String));
    // The browser now has an idgate session: a second request needs no upstream trip.
    const again = await signIn(agent, `${t.issuer}/authorize?${params}`, { redirectPrefix: RP });
    expect(again.sawLogin).toBe(false);
  });

  it('token form: trusts an upstream access token only once the upstream confirms it', async () => {
    const agent = new UserAgent();
    const start = await agent.request(`${t.issuer}/login/corp`);
    const state = new URL(start.headers.get('location') as string).searchParams.get('state') as string;
    const accessToken = await upstreamAccessToken('idgate', upstream.clientSecret);
    const ok = await agent.request(
      `${t.issuer}/callback/corp?${new URLSearchParams({ access_token: accessToken, token_type: 'BEARER', expires_in: '600', state })}`,
    );
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({
      token_type: 'Bearer',
      access_token: expect.any(String),
      id_token: expect.any(String),
    });

    const forged = await agent.request(`${t.issuer}/login/corp`);
    const state2 = new URL(forged.headers.get('location') as string).searchParams.get('state') as string;
    const bad = await agent.request(
      `${t.issuer}/callback/corp?${new URLSearchParams({ access_token: 'not-an-upstream-token', token_type: 'bearer', state: state2 })}`,
    );
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: 'access_denied' });
  });

  async function upstreamAccessToken(clientId: string, secret: string): Promise<string> {
    // A code flow at the upstream as idgate's client, to get a real upstream access token.
    const config = await oidc.discovery(new URL(upstream.issuer), clientId, secret, undefined, {
      execute: [oidc.allowInsecureRequests],
    });
    const verifier = oidc.randomPKCECodeVerifier();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: `${t.issuer}/callback/corp`,
      scope: 'openid profile groups',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state: 'x',
    });
    const agent = new UserAgent();
    let response = await agent.request(url);
    while (
      response.headers.get('location') !== null &&
      !String(response.headers.get('location')).startsWith(t.issuer)
    ) {
      response = await agent.request(new URL(response.headers.get('location') as string, url));
    }
    const callback = new URL(response.headers.get('location') as string);
    const tokens = await oidc.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: verifier,
      expectedState: 'x',
    });
    return tokens.access_token;
  }

  describe('refusals: a clear OAuth error, never a 5xx', () => {
    it.each([
      ['no state', ''],
      ['a state that was never issued', 'made-up-state'],
    ])('%s', async (_name, state) => {
      const response = await new UserAgent().request(
        `${t.issuer}/callback/corp?code=abc${state ? `&state=${state}` : ''}`,
      );
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ error: 'invalid_request' });
    });

    it('a replayed state', async () => {
      const agent = new UserAgent();
      const first = await viaUpstream(agent, `${t.issuer}/login/corp`);
      expect(first.status).toBe(200);
      const replay = await agent.request(first.url);
      expect(replay.status).toBe(400);
      expect(await replay.json()).toEqual({
        error: 'invalid_request',
        error_description: 'this sign-in was already completed: start again',
      });
    });

    it('an expired sign-in (ten minutes)', async () => {
      const agent = new UserAgent();
      const start = await agent.request(`${t.issuer}/login/corp`);
      const state = new URL(start.headers.get('location') as string).searchParams.get('state') as string;
      const database = await openDatabase(t.database.url);
      try {
        await database.db
          .updateTable('login_transactions')
          .set({ expires_at: Date.now() - 1 })
          .execute();
      } finally {
        await database.close();
      }
      const response = await agent.request(`${t.issuer}/callback/corp?code=abc&state=${state}`);
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual({
        error: 'invalid_request',
        error_description: 'the sign-in took too long: start again',
      });
    });

    it('a stranger holding the callback URL cannot use it, nor cancel the sign-in it belongs to', async () => {
      const agent = new UserAgent();
      const callback = await callbackUrl(agent);
      const stranger = await new UserAgent().request(callback);
      expect(await stranger.json()).toMatchObject({
        error_description: 'the sign-in was started in another browser',
      });
      const rightful = await agent.request(callback);
      expect(rightful.status).toBe(200);
      expect(await rightful.json()).toMatchObject({ token_type: 'Bearer' });
    });

    it('an authorization response naming another issuer, or none while the upstream says it sends one (RFC 9207)', async () => {
      const metadata = (await (
        await fetch(`${upstream.issuer}/.well-known/openid-configuration`)
      ).json()) as {
        authorization_response_iss_parameter_supported?: boolean;
      };
      expect(metadata.authorization_response_iss_parameter_supported).toBe(true);
      for (const [tamper, said] of [
        [(url: URL) => url.searchParams.set('iss', 'https://attacker.example'), 'names another issuer'],
        [(url: URL) => url.searchParams.delete('iss'), 'carries no iss parameter'],
      ] as const) {
        const agent = new UserAgent();
        const callback = await callbackUrl(agent);
        expect(callback.searchParams.get('iss')).toBe(upstream.issuer);
        tamper(callback);
        const refused = await agent.request(callback);
        expect(refused.status).toBe(400);
        expect(((await refused.json()) as { error_description: string }).error_description).toContain(said);
      }
    });

    it('a state from another browser', async () => {
      const start = await new UserAgent().request(`${t.issuer}/login/corp`);
      const state = new URL(start.headers.get('location') as string).searchParams.get('state') as string;
      const response = await new UserAgent().request(`${t.issuer}/callback/corp?code=abc&state=${state}`);
      expect(await response.json()).toMatchObject({
        error: 'invalid_request',
        error_description: 'the sign-in was started in another browser',
      });
    });

    it('an upstream error response, as a page for a browser', async () => {
      upstream.nextAccount = null;
      const agent = new UserAgent();
      const response = await viaUpstream(agent, `${t.issuer}/login/corp`);
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({
        error: 'access_denied',
        error_description: 'corp answered access_denied',
      });
      const start = await agent.request(`${t.issuer}/login/corp`);
      const state = new URL(start.headers.get('location') as string).searchParams.get('state') as string;
      const page = await agent.request(`${t.issuer}/callback/corp?error=access_denied&state=${state}`, {
        headers: { accept: 'text/html' },
      });
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      const text = await page.text();
      expect(text).toContain('Sign-in failed');
      expect(text).toContain('Corp answered access_denied.');
      expect(page.headers.get('cache-control')).toBe('no-store');
    });

    it('an unknown provider, and a disabled one', async () => {
      const unknown = await new UserAgent().request(`${t.issuer}/login/nope`);
      expect(unknown.status).toBe(404);
      await t.server.services.storage.identityProviders.setDisabled('corp-manual', true, new Date());
      const disabled = await new UserAgent().request(`${t.issuer}/login/corp-manual`);
      expect(await disabled.json()).toMatchObject({ error: 'access_denied' });
      await t.server.services.storage.identityProviders.setDisabled('corp-manual', false, new Date());
    });

    it('an upstream that does not answer', async () => {
      await addIdentityProvider(t, {
        type: 'oidc',
        name: 'gone',
        issuer: 'http://127.0.0.1:9',
        clientId: 'x',
        clientSecret: 'y',
        tokenClientId: tokenClient.clientId,
      });
      const response = await new UserAgent().request(`${t.issuer}/login/gone`);
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ error: 'temporarily_unavailable' });
    });

    it('a bad code is refused by the upstream', async () => {
      const agent = new UserAgent();
      const start = await agent.request(`${t.issuer}/login/corp`);
      const state = new URL(start.headers.get('location') as string).searchParams.get('state') as string;
      const response = await agent.request(`${t.issuer}/callback/corp?code=forged-code&state=${state}`);
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ error: 'access_denied' });
    });
  });

  describe('mapping methods', () => {
    it('lookup links by verified email only, and refuses an unknown identity', async () => {
      // alice@corp.test belongs to two users by now (alice.smith, auto-created, and this one):
      // an ambiguous email links nobody.
      await t.addUser('alice2', 'battery-staple-857b0b', { email: 'alice@corp.test' });
      const ambiguous = await viaUpstream(new UserAgent(), `${t.issuer}/login/corp-lookup`);
      expect(ambiguous.status).toBe(400);
      upstream.accounts.set('u-300', {
        sub: 'u-300',
        preferred_username: 'carla',
        email: 'carla@corp.test',
        email_verified: true,
      });
      upstream.nextAccount = 'u-300';
      await t.addUser('carla', 'battery-staple-aa714e', { email: 'CARLA@corp.test' });
      const linked = await viaUpstream(new UserAgent(), `${t.issuer}/login/corp-lookup`);
      const { access_token } = (await linked.json()) as { access_token: string };
      expect((await review(access_token)).user?.username).toBe('carla');
      upstream.nextAccount = 'u-200';
      const refused = await viaUpstream(new UserAgent(), `${t.issuer}/login/corp-lookup`);
      expect(refused.status).toBe(400);
      expect(await refused.json()).toEqual({
        error: 'access_denied',
        error_description: 'no account is linked to this corp-lookup identity',
      });
    });

    it('manual signs in only what an administrator linked', async () => {
      upstream.nextAccount = 'u-200';
      const refused = await viaUpstream(new UserAgent(), `${t.issuer}/login/corp-manual`);
      expect(refused.status).toBe(400);
      const userId = await t.addUser('robert', 'battery-staple-756e20');
      await t.server.services.storage.identities.link({
        provider: 'corp-manual',
        subject: 'u-200',
        userId,
        username: 'bob',
        email: null,
        groups: [],
        linkedAt: new Date(),
        lastLoginAt: null,
      });
      const ok = await viaUpstream(new UserAgent(), `${t.issuer}/login/corp-manual`);
      const { access_token } = (await ok.json()) as { access_token: string };
      expect((await review(access_token)).user?.username).toBe('robert');
    });

    it('auto resolves a username collision deterministically, and a disabled user cannot sign in', async () => {
      await t.addUser('bob', 'battery-staple-4a9668');
      upstream.nextAccount = 'u-200';
      const first = await viaUpstream(new UserAgent(), `${t.issuer}/login/corp`);
      const { access_token } = (await first.json()) as { access_token: string };
      const username = (await review(access_token)).user?.username as string;
      expect(username).toMatch(/^bob-[0-9a-f]{6}$/);
      const user = await userNamed(username);
      await t.server.services.storage.users.update(user.id, { disabled: true, updatedAt: new Date() });
      const refused = await viaUpstream(new UserAgent(), `${t.issuer}/login/corp`);
      expect(await refused.json()).toEqual({
        error: 'access_denied',
        error_description: 'the account is disabled',
      });
      const records = await t.server.services.storage.loginAttempts.listByUsername('bob', 5);
      expect(records[0]).toMatchObject({ provider: 'corp', success: false, reason: 'disabled' });
    });
  });
});
