import { decodeJwt } from 'jose';
import { describe, expect, it } from 'vitest';
import { giveConsent } from '../src/authorize/consent.js';
import { issueAuthorizationCode, nextAuthorizationStep } from '../src/authorize/flow.js';
import { computeCodeChallenge } from '../src/authorize/pkce.js';
import {
  type AuthorizationError,
  type AuthorizationRequest,
  validateAuthorizationRequest,
} from '../src/authorize/request.js';
import { OAuthProtocolError } from '../src/errors.js';
import type { TokenEndpointContext } from '../src/grants/context.js';
import { refreshSuccessorKey } from '../src/grants/refresh-token.js';
import { handleTokenRequest } from '../src/grants/token-endpoint.js';
import { hashSecret } from '../src/secrets.js';
import { LoginThrottle } from '../src/security/login-throttle.js';
import { validateLogoutRequest } from '../src/sessions/logout.js';
import { client, ISSUER, keyRing, manualClock, seededStorage, signRaw } from './helpers.js';

const REDIRECT = 'https://app.example/cb';
const SECRET = 'flow-client-secret-0123456789';
const VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';

async function setup(overrides: Parameters<typeof client>[0] = {}) {
  const clock = manualClock();
  const ring = await keyRing('ES256', clock);
  const { storage, hasher } = await seededStorage();
  const registered = client({
    secretHash: await hashSecret(SECRET),
    trusted: false,
    grantTypes: ['authorization_code', 'refresh_token'],
    scopes: ['openid', 'groups', 'offline_access'],
    redirectUris: [REDIRECT],
    refreshTokenTtl: 3600,
    ...overrides,
  });
  await storage.clients.create(registered);
  const context: TokenEndpointContext = {
    issuer: ISSUER,
    keys: ring,
    clock,
    findClient: (id) => storage.clients.findById(id),
    passwords: {
      findUserByUsername: (u) => storage.users.findByUsername(u),
      hasher,
      dummyHash: await hasher.hash('x'),
    },
    storage,
    lifetimes: { idToken: 600, grant: 7200, maxAccessToken: 600 },
  };
  const user = await storage.users.findById('u-alice');
  if (user === undefined) throw new Error('the fixture user is missing');
  const request: AuthorizationRequest = {
    clientId: registered.clientId,
    redirectUri: REDIRECT,
    scope: ['openid', 'offline_access'],
    prompt: [],
    codeChallenge: await computeCodeChallenge(VERIFIER),
    codeChallengeMethod: 'S256',
  };
  const authentication = { user, authTime: new Date(clock.now()), sessionId: 'sess-1', fresh: true };
  const code = () =>
    issueAuthorizationCode(request, authentication, { clock, codes: storage.authorizationCodes });
  const basic = `Basic ${btoa(`${registered.clientId}:${SECRET}`)}`;
  const exchange = (value: string, extra: Record<string, string> = {}) =>
    handleTokenRequest(
      {
        grant_type: 'authorization_code',
        code: value,
        redirect_uri: REDIRECT,
        code_verifier: VERIFIER,
        ...extra,
      },
      basic,
      context,
    );
  const refresh = (token: string, extra: Record<string, string> = {}) =>
    handleTokenRequest({ grant_type: 'refresh_token', refresh_token: token, ...extra }, basic, context);
  return { clock, storage, context, registered, request, authentication, code, exchange, refresh };
}

async function refusal(promise: Promise<unknown>): Promise<OAuthProtocolError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(OAuthProtocolError);
  return error as OAuthProtocolError;
}

describe('RFC 6749 §4.1.2 authorization codes', () => {
  it('expire 60 s after issue', async () => {
    const { clock, code, exchange } = await setup();
    const value = await code();
    clock.advance(60);
    expect((await refusal(exchange(value))).description).toBe('the authorization code has expired');
  });

  it('are single use; a replay revokes the grant the first use opened', async () => {
    const { code, exchange, refresh } = await setup();
    const value = await code();
    const first = await exchange(value);
    expect((await refusal(exchange(value))).description).toBe('the authorization code was already used');
    expect((await refusal(refresh(first.refresh_token as string))).description).toBe(
      'the grant has been revoked',
    );
  });

  it("hand the session's upstream identity on to the grant they open; a local sign-in's carry none", async () => {
    const { storage, clock, authentication, request, exchange, code } = await setup();
    const upstream = {
      provider: 'corp',
      subject: 'u-1',
      validatedAt: new Date(1000),
      checkedAt: new Date(1000),
      sealedState: 'v1.a.b',
    };
    const federated = await issueAuthorizationCode(
      request,
      { ...authentication, upstream },
      { clock, codes: storage.authorizationCodes },
    );
    const sid = async (value: string) => decodeJwt((await exchange(value)).access_token).sid as string;
    expect((await storage.grants.findById(await sid(federated)))?.upstream).toStrictEqual(upstream);
    expect((await storage.grants.findById(await sid(await code())))?.upstream).toBeNull();
  });

  it('refuse a verifier when the request had no challenge (PKCE downgrade)', async () => {
    const { storage, clock, authentication, request, exchange } = await setup();
    const { codeChallenge: _c, codeChallengeMethod: _m, ...plain } = request;
    const value = await issueAuthorizationCode(plain, authentication, {
      clock,
      codes: storage.authorizationCodes,
    });
    expect((await refusal(exchange(value))).description).toBe(
      'code_verifier was sent but the authorization request had no code_challenge',
    );
  });
});

describe('RFC 9700 §4.14.2 refresh token rotation', () => {
  it('rotates, expires when idle, and never outlives the grant', async () => {
    const { clock, code, exchange, refresh } = await setup();
    const tokens = await exchange(await code());
    clock.advance(3599);
    const second = await refresh(tokens.refresh_token as string);
    clock.advance(3600);
    expect((await refusal(refresh(second.refresh_token as string))).description).toBe(
      'the refresh token has expired',
    );

    const again = await exchange(await code());
    clock.advance(3000);
    const r1 = await refresh(again.refresh_token as string);
    clock.advance(3000);
    const r2 = await refresh(r1.refresh_token as string);
    clock.advance(1201);
    // 7201 s after the grant opened: past its absolute lifetime of 7200 s.
    expect((await refusal(refresh(r2.refresh_token as string))).description).toBe(
      'the refresh token has expired',
    );
  });

  it("records the time and address of the grant's latest token request, and none on a revoked grant", async () => {
    const { clock, context, storage, code, exchange, refresh } = await setup();
    context.sourceAddress = '192.0.2.1';
    const tokens = await exchange(await code());
    const opened = (await storage.grants.listLiveByUser('u-alice', new Date(clock.now()), { limit: 10 }))[0];
    expect(opened).toMatchObject({ lastUsedAt: new Date(clock.now()), lastUsedAddress: '192.0.2.1' });
    clock.advance(60);
    context.sourceAddress = '192.0.2.2';
    await refresh(tokens.refresh_token as string);
    const id = opened?.id as string;
    expect(await storage.grants.findById(id)).toMatchObject({
      lastUsedAt: new Date(clock.now()),
      lastUsedAddress: '192.0.2.2',
    });
    await storage.grants.revoke(id, new Date(clock.now()));
    expect(await storage.grants.recordUse(id, new Date(clock.now() + 1000), '192.0.2.3')).toBeUndefined();
    expect((await storage.grants.findById(id))?.lastUsedAddress).toBe('192.0.2.2');
  });

  it('issues no refresh token without offline_access', async () => {
    const { storage, clock, authentication, request, exchange } = await setup();
    const value = await issueAuthorizationCode({ ...request, scope: ['openid'] }, authentication, {
      clock,
      codes: storage.authorizationCodes,
    });
    expect(await exchange(value)).not.toHaveProperty('refresh_token');
  });
});

describe('concurrent refresh: the reuse window', () => {
  const SERVER_SECRET = 'server-secret-0123456789-0123456789';
  async function windowed(windowSeconds: number) {
    const flow = await setup();
    flow.context.refreshReuse = { windowSeconds, successorKey: await refreshSuccessorKey(SERVER_SECRET) };
    const first = await flow.exchange(await flow.code());
    return { ...flow, first: first.refresh_token as string };
  }

  it('answers the same successor to a token presented again within the window, and keeps the grant', async () => {
    const { clock, refresh, first } = await windowed(10);
    const a = await refresh(first);
    clock.advance(9);
    const b = await refresh(first);
    expect(b.refresh_token).toBe(a.refresh_token);
    expect(b.access_token).not.toBe(a.access_token);
    // The successor works once, and the chain goes on.
    const c = await refresh(a.refresh_token as string);
    expect(c.refresh_token).not.toBe(a.refresh_token);
    expect(await refresh(c.refresh_token as string)).toHaveProperty('refresh_token');
  });

  it('revokes the grant when the token comes back after the window', async () => {
    const { clock, refresh, first } = await windowed(10);
    const a = await refresh(first);
    clock.advance(11);
    expect((await refusal(refresh(first))).description).toBe(
      'the refresh token was already used; the grant is revoked',
    );
    expect((await refusal(refresh(a.refresh_token as string))).description).toBe(
      'the grant has been revoked',
    );
  });

  it('revokes the grant when the successor was already used, however soon the old token comes back', async () => {
    const { refresh, first } = await windowed(10);
    const a = await refresh(first);
    const b = await refresh(a.refresh_token as string);
    expect((await refusal(refresh(first))).description).toBe(
      'the refresh token was already used; the grant is revoked',
    );
    expect((await refusal(refresh(b.refresh_token as string))).description).toBe(
      'the grant has been revoked',
    );
  });

  it('with a window of 0 any re-presentation is reuse, and successors are random', async () => {
    const { refresh, first } = await windowed(0);
    const a = await refresh(first);
    expect((await refusal(refresh(first))).description).toBe(
      'the refresh token was already used; the grant is revoked',
    );
    expect((await refusal(refresh(a.refresh_token as string))).description).toBe(
      'the grant has been revoked',
    );
  });

  it('derives successors a holder of the token cannot compute without the server secret', async () => {
    const one = await windowed(10);
    const other = await refreshSuccessorKey('another-secret-0123456789-0123456789');
    const a = await one.refresh(one.first);
    const sign = async (key: CryptoKey) =>
      btoa(
        String.fromCharCode(
          ...new Uint8Array(await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(one.first))),
        ),
      );
    // Not a plain hash of the token, and not the successor another secret gives.
    const digest = btoa(
      String.fromCharCode(
        ...new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(one.first))),
      ),
    );
    const asBase64url = (b64: string) => b64.replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
    expect(a.refresh_token).not.toBe(asBase64url(digest));
    expect(a.refresh_token).not.toBe(asBase64url(await sign(other)));
    expect(a.refresh_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });
});

describe('OIDC Core §3.1.2 authorization decisions', () => {
  it('asks for login, honours max_age and prompt=login, then asks consent once', async () => {
    const { clock, storage, registered, request, authentication } = await setup();
    const context = { clock, consents: storage.consents };
    expect(await nextAuthorizationStep(request, registered, undefined, context)).toEqual({ kind: 'login' });
    const stale = { ...authentication, fresh: false };
    expect(
      await nextAuthorizationStep({ ...request, prompt: ['login'] }, registered, stale, context),
    ).toEqual({ kind: 'login' });
    clock.advance(301);
    expect(await nextAuthorizationStep({ ...request, maxAge: 300 }, registered, stale, context)).toEqual({
      kind: 'login',
    });
    expect(await nextAuthorizationStep(request, registered, stale, context)).toEqual({
      kind: 'consent',
      missing: ['openid', 'offline_access'],
      missingResources: [],
    });
    await storage.consents.save({
      userId: 'u-alice',
      clientId: registered.clientId,
      scope: ['openid', 'offline_access'],
      grantedAt: new Date(),
    });
    expect(await nextAuthorizationStep(request, registered, stale, context)).toEqual({ kind: 'issue' });
    expect(
      await nextAuthorizationStep({ ...request, prompt: ['consent'] }, registered, stale, context),
    ).toMatchObject({ kind: 'consent' });
  });

  it('asks consent again for a cluster the person never consented to, however old the scope consent', async () => {
    const { clock, storage, registered, request, authentication } = await setup();
    const context = { clock, consents: storage.consents };
    const signedIn = { ...authentication, fresh: false };
    const forProd = { ...request, resource: ['kubernetes:prod'] };
    // A consent remembered before idgate recorded resources covers none.
    await storage.consents.save({
      userId: 'u-alice',
      clientId: registered.clientId,
      scope: ['openid', 'offline_access'],
      grantedAt: new Date(),
    });
    expect(await nextAuthorizationStep(forProd, registered, signedIn, context)).toEqual({
      kind: 'consent',
      missing: [],
      missingResources: ['kubernetes:prod'],
    });
    await giveConsent(
      'u-alice',
      registered.clientId,
      { scope: forProd.scope, resources: forProd.resource },
      { consents: storage.consents, clock },
    );
    expect(await nextAuthorizationStep(forProd, registered, signedIn, context)).toEqual({ kind: 'issue' });
    const none = { ...request, resource: ['kubernetes:prod', 'kubernetes:stage'], prompt: ['none' as const] };
    const refused = (await nextAuthorizationStep(none, registered, signedIn, context).catch(
      (e) => e,
    )) as AuthorizationError;
    expect(refused.code).toBe('consent_required');
    expect(await nextAuthorizationStep({ ...none, prompt: [] }, registered, signedIn, context)).toMatchObject(
      { kind: 'consent', missingResources: ['kubernetes:stage'] },
    );
  });

  it('answers prompt=none with login_required or consent_required for the client', async () => {
    const { clock, storage, registered, request, authentication } = await setup();
    const context = { clock, consents: storage.consents };
    const none = { ...request, prompt: ['none' as const], state: 'st' };
    const login = (await nextAuthorizationStep(none, registered, undefined, context).catch(
      (e) => e,
    )) as AuthorizationError;
    expect([login.code, login.redirectUri, login.state]).toEqual(['login_required', REDIRECT, 'st']);
    const consent = (await nextAuthorizationStep(
      none,
      registered,
      { ...authentication, fresh: false },
      context,
    ).catch((e) => e)) as AuthorizationError;
    expect(consent.code).toBe('consent_required');
  });

  it('skips consent for trusted clients', async () => {
    const { clock, storage, registered, request, authentication } = await setup({ trusted: true });
    expect(
      await nextAuthorizationStep(request, registered, authentication, { clock, consents: storage.consents }),
    ).toEqual({ kind: 'issue' });
  });

  it('validates a request: repeated parameters and unknown prompts are refused', async () => {
    const { storage } = await setup();
    const findClient = (id: string) => storage.clients.findById(id);
    const params = {
      client_id: 'cli',
      redirect_uri: REDIRECT,
      response_type: 'code',
      code_challenge: await computeCodeChallenge(VERIFIER),
      code_challenge_method: 'S256',
    };
    expect((await validateAuthorizationRequest(params, { findClient })).request.scope).toEqual([
      'openid',
      'groups',
      'offline_access',
    ]);
    const repeated = (await validateAuthorizationRequest(
      { ...params, scope: ['openid', 'groups'] },
      { findClient },
    ).catch((e) => e)) as AuthorizationError;
    expect([repeated.code, repeated.redirectable]).toEqual(['invalid_request', true]);
    const prompt = (await validateAuthorizationRequest(
      { ...params, prompt: 'select_account bogus' },
      { findClient },
    ).catch((e) => e)) as AuthorizationError;
    expect(prompt.description).toBe('prompt bogus is not supported');
    const required = (await validateAuthorizationRequest(
      { ...params, code_challenge: undefined, code_challenge_method: undefined },
      { findClient, requirePkce: true },
    ).catch((e) => e)) as AuthorizationError;
    expect(required.description).toMatch(/^PKCE is required/);
  });
});

describe('brute-force protection', () => {
  it('locks after N failures for the window after the last one, and a success resets the count', async () => {
    const { storage, clock } = await setup();
    const throttle = new LoginThrottle(
      storage.loginAttempts,
      { maxFailures: 3, windowSeconds: 600, maxFailuresPerAddress: 10 },
      clock,
    );
    const fail = async () => {
      clock.advance(1);
      await throttle.record({
        username: 'Alice',
        userId: null,
        sourceAddress: '10.0.0.1',
        provider: 'password',
        success: false,
        reason: 'invalid_credentials',
      });
    };
    await fail();
    await fail();
    clock.advance(1);
    await throttle.record({
      username: 'alice',
      userId: 'u-alice',
      sourceAddress: '10.0.0.1',
      provider: 'password',
      success: true,
      reason: null,
    });
    await fail();
    await fail();
    expect(await throttle.check('ALICE')).toEqual({ locked: false });
    await fail();
    // The lock ends a window after the failure that set it.
    expect(await throttle.check('alice')).toEqual({
      locked: true,
      retryAfterSeconds: 600,
      until: new Date(clock.now() + 600_000),
      scope: 'account',
    });
    clock.advance(599);
    expect(await throttle.check('alice')).toMatchObject({ locked: true, retryAfterSeconds: 1 });
    clock.advance(1);
    expect(await throttle.check('alice')).toEqual({ locked: false });
  });

  it('blocks an address that fails across many accounts', async () => {
    const { storage, clock } = await setup();
    const throttle = new LoginThrottle(
      storage.loginAttempts,
      { maxFailures: 100, windowSeconds: 600, maxFailuresPerAddress: 3 },
      clock,
    );
    for (const username of ['a', 'b', 'c']) {
      await throttle.record({
        username,
        userId: null,
        sourceAddress: '192.0.2.9',
        provider: 'password',
        success: false,
        reason: 'invalid_credentials',
      });
    }
    expect(await throttle.check('d', '192.0.2.9')).toMatchObject({ locked: true, scope: 'address' });
    expect(await throttle.check('d', '192.0.2.10')).toEqual({ locked: false });
  });
});

describe('OIDC RP-Initiated Logout 1.0 §2', () => {
  it('accepts an expired id_token_hint but not one of another issuer', async () => {
    const { context, registered, storage } = await setup({
      postLogoutRedirectUris: ['https://app.example/bye'],
    });
    const hint = (issuer: string) =>
      signRaw(
        context.keys,
        { alg: context.keys.signer.alg, kid: context.keys.signer.kid },
        { azp: registered.clientId, iss: issuer, sub: 'u-alice', aud: registered.clientId, iat: 0, exp: 1 },
      );
    const options = {
      issuer: ISSUER,
      keys: context.keys,
      findClient: (id: string) => storage.clients.findById(id),
    };
    const logout = await validateLogoutRequest(
      {
        id_token_hint: await hint(ISSUER),
        post_logout_redirect_uri: 'https://app.example/bye',
        state: 'a b',
      },
      options,
    );
    expect(logout).toEqual({
      hinted: true,
      subject: 'u-alice',
      clientId: registered.clientId,
      redirectTo: 'https://app.example/bye?state=a+b',
    });
    await expect(
      validateLogoutRequest({ id_token_hint: await hint('https://other/oauth') }, options),
    ).rejects.toThrow(/id_token_hint/);
  });
});
