import { createRemoteJWKSet, customFetch, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { testDatabaseUrls } from '../helpers/databases.js';

describe.each(testDatabaseUrls())('POST /oauth/token on $name', (kind) => {
  let t: TestApp;
  let trusted: { clientId: string; clientSecret: string };
  let untrusted: { clientId: string; clientSecret: string };
  let userId: string;

  beforeAll(async () => {
    t = await startTestApp(kind);
    userId = await t.addUser('bob', 'purple-monkey-dishwasher', {
      email: 'bob@example.test',
      displayName: 'Bob',
      groups: ['ops'],
    });
    trusted = await t.addClient({
      grants: ['password', 'client_credentials'],
      trusted: true,
      scopes: ['openid', 'profile', 'email', 'groups', 'api'],
    });
    untrusted = await t.addClient({
      grants: ['password', 'client_credentials'],
      trusted: false,
      scopes: ['api'],
    });
  });
  afterAll(async () => t?.close());

  const post = (body: Record<string, string> | string, headers: Record<string, string> = {}) =>
    t.fetch(`${t.issuer}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: typeof body === 'string' ? body : new URLSearchParams(body),
    });
  const basic = (c: { clientId: string; clientSecret: string }) => ({
    authorization: `Basic ${btoa(`${c.clientId}:${c.clientSecret}`)}`,
  });

  it('password grant: tokens for a trusted client, verified with jose against the served JWKS', async () => {
    const response = await post(
      {
        grant_type: 'password',
        username: 'BOB',
        password: 'purple-monkey-dishwasher',
        scope: 'openid email groups',
      },
      basic(trusted),
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('pragma')).toBe('no-cache');
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ token_type: 'Bearer', expires_in: 600, scope: 'openid email groups' });
    expect(body).not.toHaveProperty('refresh_token');
    const jwks = createRemoteJWKSet(new URL(`${t.issuer}/keys`), { [customFetch]: t.fetch });
    const access = await jwtVerify(body.access_token as string, jwks, {
      issuer: t.issuer,
      typ: 'at+jwt',
      audience: trusted.clientId,
    });
    expect(access.payload).toMatchObject({
      sub: userId,
      client_id: trusted.clientId,
      scope: 'openid email groups',
    });
    const id = await jwtVerify(body.id_token as string, jwks, {
      issuer: t.issuer,
      audience: trusted.clientId,
    });
    expect(id.payload).toMatchObject({
      sub: userId,
      azp: trusted.clientId,
      email: 'bob@example.test',
      groups: ['ops'],
      sid: access.payload.sid,
    });
  });

  it('client_credentials with client_secret_post', async () => {
    const response = await post({
      grant_type: 'client_credentials',
      client_id: untrusted.clientId,
      client_secret: untrusted.clientSecret,
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ token_type: 'Bearer', scope: 'api', expires_in: 600 });
  });

  it.each([
    ['a wrong password', { grant_type: 'password', username: 'bob', password: 'nope' }, 400, 'invalid_grant'],
    [
      'an unknown grant type',
      { grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer' },
      400,
      'unsupported_grant_type',
    ],
    ['no grant type', { scope: 'api' }, 400, 'invalid_request'],
    ['a scope beyond the client', { grant_type: 'client_credentials', scope: 'admin' }, 400, 'invalid_scope'],
  ])('%s → %i %s', async (_name, body, status, error) => {
    const response = await post(body, basic(trusted));
    expect(response.status).toBe(status);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(await response.json()).toMatchObject({ error, error_description: expect.any(String) });
  });

  it('refuses the password grant to an untrusted client', async () => {
    const response = await post(
      { grant_type: 'password', username: 'bob', password: 'purple-monkey-dishwasher' },
      basic(untrusted),
    );
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      error: 'unauthorized_client',
      error_description: 'the password grant is allowed only for trusted clients',
    });
  });

  it('answers invalid_client with 401 and a Basic challenge', async () => {
    const response = await post(
      { grant_type: 'client_credentials' },
      basic({ clientId: trusted.clientId, clientSecret: 'wrong' }),
    );
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toMatch(/^Basic realm="idgate"/);
    expect(await response.json()).toEqual({
      error: 'invalid_client',
      error_description: 'client authentication failed',
    });
  });

  describe('bad input never gets a 5xx', () => {
    it('JSON instead of a form → 400 invalid_request', async () => {
      const response = await t.fetch(`${t.issuer}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...basic(trusted) },
        body: '{"grant_type":"client_credentials"}',
      });
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual({
        error: 'invalid_request',
        error_description: 'the token endpoint takes application/x-www-form-urlencoded',
      });
    });

    it('malformed JSON is still an OAuth error', async () => {
      const response = await t.fetch(`${t.issuer}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{',
      });
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ error: 'invalid_request' });
    });

    it('any other content type → 400 invalid_request', async () => {
      for (const type of ['text/plain', 'application/xml', 'multipart/form-data; boundary=x']) {
        const response = await t.fetch(`${t.issuer}/token`, {
          method: 'POST',
          headers: { 'content-type': type },
          body: 'grant_type=password',
        });
        expect(response.status).toBe(400);
        expect(await response.json()).toMatchObject({ error: 'invalid_request' });
      }
    });

    it('an oversized body → 413', async () => {
      const response = await post(
        { grant_type: 'password', username: 'bob', password: 'x'.repeat(100_000) },
        basic(trusted),
      );
      expect(response.status).toBe(413);
      expect(await response.json()).toMatchObject({ error: 'invalid_request' });
    });

    it('repeated parameters, over-long values and broken percent-encoding → 400', async () => {
      for (const body of [
        'grant_type=client_credentials&grant_type=password',
        `grant_type=password&username=${'u'.repeat(300)}&password=x`,
        'grant_type=%ZZ&scope=%',
      ]) {
        const response = await post(body, basic(trusted));
        expect(response.status).toBe(400);
        expect(await response.json()).toMatchObject({
          error: expect.stringMatching(/^(invalid_request|unsupported_grant_type)$/),
        });
      }
    });

    it('prototype-polluting field names are plain parameters', async () => {
      const response = await post('grant_type=client_credentials&__proto__=x&constructor=y', basic(trusted));
      expect(response.status).toBe(200);
    });

    it('GET is not a token request: 405, naming POST', async () => {
      const response = await t.fetch(`${t.issuer}/token?grant_type=client_credentials`);
      expect(response.status).toBe(405);
      expect(response.headers.get('allow')?.split(', ')).toContain('POST');
      expect(((await response.json()) as { error: string }).error).toBe('invalid_request');
    });
  });

  it('never logs passwords, secrets or tokens', async () => {
    const response = await post(
      { grant_type: 'password', username: 'bob', password: 'purple-monkey-dishwasher', scope: 'openid' },
      basic(trusted),
    );
    const { access_token, id_token } = (await response.json()) as Record<string, string>;
    const logs = t.logs.join('\n');
    // The request was logged (so the absence of secrets below says something).
    expect(logs).toContain('"url":"/oauth/token"');
    for (const secret of ['purple-monkey-dishwasher', trusted.clientSecret, access_token, id_token])
      expect(logs).not.toContain(secret);
  });
});
