import { rotateSigningKey, signCompactJws } from '@idgate/core';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabaseUrls } from '../helpers/databases.js';
import { startTestServer, type TestServer, testClock } from '../helpers/server.js';

const V1 = 'authentication.k8s.io/v1';
const V1BETA1 = 'authentication.k8s.io/v1beta1';

describe.each(testDatabaseUrls())('Kubernetes TokenReview webhook on $name', (kind) => {
  let t: TestServer;
  let reviewKey: string;
  let adminKey: string;
  let userId: string;
  let client: { clientId: string; clientSecret: string };
  // Time moves only forward, and only when a test says so.
  const clock = testClock();

  beforeAll(async () => {
    t = await startTestServer(kind, {}, { clock });
    reviewKey = await t.addApiKey(['tokenreview']);
    adminKey = await t.addApiKey(['admin']);
    userId = await t.addUser('Alice', 'correct horse battery', { groups: ['platform', 'dev'] });
    client = await t.addClient({
      grants: ['password', 'client_credentials'],
      trusted: true,
      scopes: ['openid', 'groups', 'api'],
    });
  });
  afterAll(async () => t?.close());

  async function token(grant: 'password' | 'client_credentials' = 'password', c = client): Promise<string> {
    const body = new URLSearchParams(
      grant === 'password'
        ? {
            grant_type: 'password',
            username: 'alice',
            password: 'correct horse battery',
            scope: 'openid groups',
          }
        : { grant_type: 'client_credentials' },
    );
    const response = await fetch(`${t.issuer}/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${btoa(`${c.clientId}:${c.clientSecret}`)}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body,
    });
    expect(response.status).toBe(200);
    return ((await response.json()) as { access_token: string }).access_token;
  }

  async function review(
    body: unknown,
    authorization: string | null = `Bearer ${reviewKey}`,
    contentType = 'application/json',
  ) {
    const response = await fetch(`${t.issuer.replace('/oauth', '')}/oauth/authenticate`, {
      method: 'POST',
      headers: { ...(authorization === null ? {} : { authorization }), 'content-type': contentType },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await response.text();
    return {
      status: response.status,
      headers: response.headers,
      body: text === '' ? undefined : JSON.parse(text),
    };
  }

  const tokenReview = (tokenValue: string | undefined, apiVersion = V1, audiences?: string[]) => ({
    apiVersion,
    kind: 'TokenReview',
    spec: { ...(tokenValue === undefined ? {} : { token: tokenValue }), ...(audiences ? { audiences } : {}) },
  });

  it('authenticates a user token: username, uid, groups, extra, and the Deprecation header', async () => {
    const accessToken = await token();
    const { status, headers, body } = await review(tokenReview(accessToken));
    expect(status).toBe(200);
    expect(headers.get('deprecation')).toBe('@1795219200');
    expect(headers.get('content-type')).toMatch(/^application\/json/);
    expect(body).toEqual({
      apiVersion: V1,
      kind: 'TokenReview',
      status: {
        authenticated: true,
        user: {
          username: 'Alice',
          uid: userId,
          groups: ['dev', 'platform'],
          extra: {
            'idgate.dev/client-id': [client.clientId],
            'idgate.dev/scopes': ['openid', 'groups'],
            'idgate.dev/grant-id': [expect.any(String)],
          },
        },
      },
    });
  });

  it('verifies the same token independently with jose against the served JWKS', async () => {
    const accessToken = await token();
    const { payload, protectedHeader } = await jwtVerify(
      accessToken,
      createRemoteJWKSet(new URL(`${t.issuer}/keys`)),
      {
        issuer: t.issuer,
        typ: 'at+jwt',
      },
    );
    expect(protectedHeader.alg).toBe('RS256');
    expect(payload).toMatchObject({ sub: userId, client_id: client.clientId, aud: client.clientId });
    expect(payload.jti).toEqual(expect.any(String));
    expect(payload.sid).toEqual(expect.any(String));
  });

  it('echoes v1beta1 and accepts a bare API key', async () => {
    const { status, body } = await review(tokenReview(await token(), V1BETA1), reviewKey);
    expect(status).toBe(200);
    expect(body.apiVersion).toBe(V1BETA1);
    expect(body.status.authenticated).toBe(true);
  });

  it('maps client_credentials tokens to the service identity', async () => {
    const { body } = await review(tokenReview(await token('client_credentials')));
    expect(body.status).toMatchObject({
      authenticated: true,
      user: {
        username: `client:${client.clientId}`,
        uid: `client:${client.clientId}`,
        groups: ['idgate:clients'],
      },
    });
  });

  it.each([
    ['garbage', 'garbage', 'token is malformed'],
    [
      'alg none',
      `${btoa('{"alg":"none","typ":"at+jwt"}').replace(/=/g, '')}.${btoa('{"sub":"x"}').replace(/=/g, '')}.`,
      'token signing algorithm is not allowed',
    ],
    ['an empty token', '', 'token is missing'],
  ])('answers 200 authenticated:false for %s', async (_name, value, error) => {
    const { status, body } = await review(tokenReview(value));
    expect(status).toBe(200);
    expect(body.status).toEqual({ authenticated: false, error });
  });

  it('answers authenticated:false for a bad signature and for an ID token', async () => {
    const accessToken = await token();
    const [h, p, s] = accessToken.split('.') as [string, string, string];
    const flipped = `${h}.${p}.${s.slice(0, 10)}${s[10] === 'A' ? 'B' : 'A'}${s.slice(11)}`;
    expect((await review(tokenReview(flipped))).body.status).toEqual({
      authenticated: false,
      error: 'token signature is invalid',
    });
    const response = await fetch(`${t.issuer}/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${btoa(`${client.clientId}:${client.clientSecret}`)}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({
        grant_type: 'password',
        username: 'alice',
        password: 'correct horse battery',
        scope: 'openid',
      }),
    });
    const { id_token } = (await response.json()) as { id_token: string };
    expect((await review(tokenReview(id_token))).body.status).toEqual({
      authenticated: false,
      error: 'token is not an access token',
    });
  });

  it('stops authenticating a disabled user at once, and again after enabling', async () => {
    const accessToken = await token();
    const { storage } = t.server.services;
    await storage.users.update(userId, { disabled: true, updatedAt: new Date() });
    expect((await review(tokenReview(accessToken))).body.status).toEqual({
      authenticated: false,
      error: 'user is disabled',
    });
    await storage.users.update(userId, { disabled: false, updatedAt: new Date() });
    expect((await review(tokenReview(accessToken))).body.status.authenticated).toBe(true);
  });

  it('honours a revocation of the token’s grant', async () => {
    const accessToken = await token();
    const sid = JSON.parse(Buffer.from(accessToken.split('.')[1] as string, 'base64url').toString()).sid;
    await t.server.services.storage.revocations.add({
      kind: 'sid',
      value: sid,
      expiresAt: new Date(Date.now() + 3600_000),
      createdAt: new Date(),
    });
    expect((await review(tokenReview(accessToken))).body.status).toEqual({
      authenticated: false,
      error: 'token has been revoked',
    });
  });

  it('answers status.audiences as the intersection for an audience-aware token', async () => {
    const aware = await t.addClient({
      grants: ['client_credentials'],
      scopes: [],
      audiences: ['https://kubernetes.default.svc', 'https://api.example'],
    });
    const accessToken = await token('client_credentials', aware);
    const ok = await review(
      tokenReview(accessToken, V1, ['https://kubernetes.default.svc', 'https://other']),
    );
    expect(ok.body.status.audiences).toEqual(['https://kubernetes.default.svc']);
    const refused = await review(tokenReview(accessToken, V1, ['https://other']));
    expect(refused.body.status).toEqual({ authenticated: false, error: 'token audience does not match' });
  });

  describe('API key', () => {
    it.each([
      ['missing', null, 'api_key_missing'],
      ['malformed', 'Bearer nope', 'api_key_invalid'],
      ['unknown', `Bearer idg_aaaaaaaa_${'A'.repeat(43)}`, 'api_key_invalid'],
    ])('%s → 401 with WWW-Authenticate and the Deprecation header', async (_name, authorization, code) => {
      const { status, headers, body } = await review(tokenReview('x'), authorization);
      expect(status).toBe(401);
      expect(headers.get('www-authenticate')).toMatch(/^Bearer realm="idgate"/);
      expect(headers.get('deprecation')).toBe('@1795219200');
      expect(headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(body).toMatchObject({ status: 401, code });
    });

    it('a key the server knows from memory is still refused for a scope it lacks, every time', async () => {
      // The admin API authenticates the admin key first, so the server remembers it.
      const admin = await fetch(`${t.baseUrl}/admin/v1/identity-providers`, {
        headers: { authorization: `Bearer ${adminKey}` },
      });
      expect(admin.status).toBe(200);
      for (let i = 0; i < 3; i++) {
        const { status, body } = await review(tokenReview('x'), `Bearer ${adminKey}`);
        expect(status).toBe(403);
        expect(body.code).toBe('api_key_scope');
      }
      for (let i = 0; i < 3; i++) expect((await review(tokenReview('x'))).status).toBe(200);
    });

    it('without the tokenreview scope → 403', async () => {
      const { status, body } = await review(tokenReview('x'), `Bearer ${adminKey}`);
      expect(status).toBe(403);
      expect(body.code).toBe('api_key_scope');
    });

    it('revoked → 401, and its last use is recorded while it lived', async () => {
      const key = await t.addApiKey(['tokenreview']);
      expect((await review(tokenReview('x'), `Bearer ${key}`)).status).toBe(200);
      const { storage } = t.server.services;
      const record = await storage.apiKeys.findByPrefix(key.slice(0, 12));
      await expect
        .poll(async () => (await storage.apiKeys.findByPrefix(key.slice(0, 12)))?.lastUsedAt)
        .toBeInstanceOf(Date);
      await storage.apiKeys.revoke(record?.id as string, new Date());
      expect((await review(tokenReview('x'), `Bearer ${key}`)).status).toBe(401);
    });
  });

  describe('a body that is not a TokenReview → 400 with a clear message, never 5xx', () => {
    it.each([
      ['malformed JSON', '{"apiVersion":', 400, 'the body is not valid JSON'],
      ['an empty body', '', 400, 'the JSON body is empty'],
      ['a JSON array', '[]', 400, 'body: Invalid input: expected object, received array'],
      [
        'the wrong kind',
        { apiVersion: V1, kind: 'SubjectAccessReview', spec: {} },
        400,
        'kind "SubjectAccessReview": must be TokenReview',
      ],
      [
        'an unknown apiVersion',
        { apiVersion: 'authentication.k8s.io/v2', kind: 'TokenReview', spec: {} },
        400,
        'apiVersion "authentication.k8s.io/v2": must be authentication.k8s.io/v1 or authentication.k8s.io/v1beta1',
      ],
      ['no spec', { apiVersion: V1, kind: 'TokenReview' }, 400, 'spec is required'],
      [
        'a numeric token',
        { apiVersion: V1, kind: 'TokenReview', spec: { token: 42 } },
        400,
        'spec.token: Invalid input: expected string, received number',
      ],
    ])('%s', async (_name, body, status, detail) => {
      const answer = await review(body);
      expect(answer.status).toBe(status);
      expect(answer.body).toMatchObject({ status, detail });
    });

    it('a wrong content type → 415', async () => {
      const answer = await review('token=x', `Bearer ${reviewKey}`, 'application/x-www-form-urlencoded');
      expect(answer.status).toBe(415);
    });

    it('an oversized body → 413', async () => {
      const answer = await review(tokenReview('x'.repeat(70_000)));
      expect(answer.status).toBe(413);
      expect(answer.body.code).toBe('body_too_large');
    });

    it('a hostile token (huge, control characters, prototype keys) → 200 authenticated:false', async () => {
      for (const hostile of [
        'a'.repeat(60_000),
        '\u0000\u0007.\u001b.x',
        'eyJhbGciOiJSUzI1NiJ9.eyJfX3Byb3RvX18iOnt9fQ.AAAA',
      ]) {
        const answer = await review(tokenReview(hostile));
        expect(answer.status).toBe(200);
        expect(answer.body.status.authenticated).toBe(false);
      }
      const polluted = await review(
        '{"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","spec":{"token":"x"},"__proto__":{"authenticated":true}}',
      );
      expect(polluted.status).toBe(400);
    });
  });

  it('refuses a token that is not valid yet, then authenticates it once it is', async () => {
    const now = Math.floor(clock.now() / 1000);
    const claims = {
      iss: t.issuer,
      sub: client.clientId,
      aud: client.clientId,
      client_id: client.clientId,
      jti: crypto.randomUUID(),
      iat: now,
      nbf: now + 2,
      exp: now + 60,
    };
    const early = await signCompactJws(t.server.services.keys().signer, 'at+jwt', claims);
    expect((await review(tokenReview(early))).body.status).toEqual({
      authenticated: false,
      error: 'token is not valid yet',
    });
    clock.advance(3_000);
    expect((await review(tokenReview(early))).body.status).toMatchObject({ authenticated: true });
  });

  it('refuses a forged token every time it is presented, after a key reload too', async () => {
    const [header, payload, signature] = (await token('client_credentials')).split('.') as [
      string,
      string,
      string,
    ];
    const claimsOf = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
    const forged = `${header}.${Buffer.from(JSON.stringify({ ...claimsOf, jti: 'forged' })).toString('base64url')}.${signature}`;
    const refused = { authenticated: false, error: 'token signature is invalid' };
    expect((await review(tokenReview(forged))).body.status).toEqual(refused);
    expect((await review(tokenReview(forged))).body.status).toEqual(refused);
    await t.server.services.reloadKeys();
    expect((await review(tokenReview(forged))).body.status).toEqual(refused);
  });

  it('after a rotation, reviews tokens of the new key and of the retired one alike', async () => {
    const { services } = t.server;
    const before = await token();
    await rotateSigningKey(services.storage.signingKeys, services.keyPolicy, new Date(clock.now()));
    // The new key signs once the activation delay has passed.
    clock.advance((services.keyPolicy.activationDelaySeconds ?? 0) * 1000 + 1_000);
    await services.reloadKeys();
    const after = await token();
    const kid = (jwt: string) =>
      (JSON.parse(Buffer.from(jwt.split('.')[0] ?? '', 'base64url').toString()) as { kid: string }).kid;
    expect(kid(after)).not.toBe(kid(before));
    expect((await review(tokenReview(after))).body.status.authenticated).toBe(true);
    expect((await review(tokenReview(before))).body.status.authenticated).toBe(true);
  });

  it('keeps the newest keys when a reload that read them before a rotation finishes last', async () => {
    const { services } = t.server;
    const kid = (jwt: string) =>
      (JSON.parse(Buffer.from(jwt.split('.')[0] ?? '', 'base64url').toString()) as { kid: string }).kid;
    const before = kid(await token());
    // The first reload (as the change feed or the timer starts one) reads the keys, then is held.
    const keys = services.storage.signingKeys;
    const list = keys.list;
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    keys.list = async () => {
      keys.list = list;
      const records = await list.call(keys);
      await held;
      return records;
    };
    try {
      const stale = services.reloadKeys();
      await rotateSigningKey(services.storage.signingKeys, services.keyPolicy, new Date(clock.now()));
      clock.advance((services.keyPolicy.activationDelaySeconds ?? 0) * 1000 + 1_000);
      await services.reloadKeys();
      release();
      await stale;
    } finally {
      keys.list = list;
      release();
    }
    expect(kid(await token())).not.toBe(before);
  });

  it('never logs a token or an API key', async () => {
    const accessToken = await token();
    await review(tokenReview(accessToken));
    const logText = t.logs.join('\n');
    expect(logText).not.toContain(accessToken);
    expect(logText).not.toContain(reviewKey);
    expect(logText).not.toContain(client.clientSecret);
    expect(logText).not.toContain('correct horse battery');
  });
});
