import { Jwks, ProviderMetadata } from '@idgate/schema';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { testDatabaseUrls } from '../helpers/databases.js';

describe.each(testDatabaseUrls())('OpenID Connect Discovery and JWKS on $name', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(kind);
  });
  afterAll(async () => t?.close());

  it('serves the metadata at the issuer and both well-known aliases, identical and schema-valid', async () => {
    const urls = [
      `${t.issuer}/.well-known/openid-configuration`,
      `${t.baseUrl}/.well-known/openid-configuration`,
      `${t.baseUrl}/.well-known/oauth-authorization-server/oauth`,
    ];
    const bodies = await Promise.all(urls.map(async (url) => (await t.fetch(url)).json()));
    expect(bodies[1]).toEqual(bodies[0]);
    expect(bodies[2]).toEqual(bodies[0]);
    const metadata = ProviderMetadata.parse(bodies[0]);
    expect(metadata.issuer).toBe(t.issuer);
    expect(metadata.jwks_uri).toBe(`${t.issuer}/keys`);
    expect(metadata.token_endpoint).toBe(`${t.issuer}/token`);
  });

  it('advertises only what the server supports, and every advertised endpoint answers', async () => {
    const metadata = ProviderMetadata.parse(
      await (await t.fetch(`${t.issuer}/.well-known/openid-configuration`)).json(),
    );
    expect(metadata.grant_types_supported.sort()).toEqual([
      'authorization_code',
      'client_credentials',
      'password',
      'refresh_token',
      'urn:ietf:params:oauth:grant-type:device_code',
      'urn:ietf:params:oauth:grant-type:token-exchange',
    ]);
    expect(metadata.response_types_supported).toEqual(['code']);
    expect(metadata.code_challenge_methods_supported).toEqual(['S256']);
    expect(metadata.token_endpoint_auth_methods_supported).toEqual([
      'client_secret_basic',
      'client_secret_post',
      'none',
    ]);
    expect(metadata.introspection_endpoint_auth_methods_supported).toEqual([
      'client_secret_basic',
      'client_secret_post',
    ]);
    expect(metadata.id_token_signing_alg_values_supported).toEqual(['RS256']);
    expect(metadata.scopes_supported).toEqual(['openid', 'profile', 'email', 'groups', 'offline_access']);
    expect(metadata.authorization_response_iss_parameter_supported).toBe(true);
    expect(metadata).not.toHaveProperty('registration_endpoint');
    const endpoints = {
      authorization_endpoint: 'GET',
      token_endpoint: 'POST',
      userinfo_endpoint: 'GET',
      jwks_uri: 'GET',
      revocation_endpoint: 'POST',
      introspection_endpoint: 'POST',
      end_session_endpoint: 'GET',
      device_authorization_endpoint: 'POST',
    } as const;
    for (const [field, method] of Object.entries(endpoints)) {
      const url = metadata[field as keyof typeof metadata] as string;
      expect(url.startsWith(`${t.issuer}/`)).toBe(true);
      const response = await t.fetch(url, {
        method,
        redirect: 'manual',
        ...(method === 'POST'
          ? { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: '' }
          : {}),
      });
      expect([field, response.status]).not.toEqual([field, 404]);
      expect(response.status).toBeLessThan(500);
    }
  });

  it('is cacheable: a strong ETag and 304 for If-None-Match', async () => {
    const first = await t.fetch(`${t.issuer}/.well-known/openid-configuration`);
    const etag = first.headers.get('etag');
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    expect(first.headers.get('cache-control')).toBe('public, max-age=300');
    const second = await t.fetch(`${t.issuer}/.well-known/openid-configuration`, {
      headers: { 'if-none-match': etag as string },
    });
    expect(second.status).toBe(304);
    expect(await second.text()).toBe('');
    const keys = await t.fetch(`${t.issuer}/keys`);
    const third = await t.fetch(`${t.issuer}/keys`, {
      headers: { 'if-none-match': `"other", ${keys.headers.get('etag')}` },
    });
    expect(third.status).toBe(304);
  });

  it('publishes public keys only, and the kid of every issued token is among them', async () => {
    const jwks = Jwks.parse(await (await t.fetch(`${t.issuer}/keys`)).json());
    expect(jwks.keys).toHaveLength(1);
    expect(jwks.keys[0]).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig' });
    const client = await t.addClient({ grants: ['client_credentials'], scopes: [] });
    const response = await t.fetch(`${t.issuer}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: client.clientId,
        client_secret: client.clientSecret,
      }),
    });
    const { access_token } = (await response.json()) as { access_token: string };
    const { kid } = JSON.parse(Buffer.from(access_token.split('.')[0] as string, 'base64url').toString());
    expect(jwks.keys.map((key) => key.kid)).toContain(kid);
  });

  it('is public, but an Authorization header that is present and invalid gets 401', async () => {
    const apiKey = await t.addApiKey(['tokenreview']);
    for (const path of ['/.well-known/openid-configuration', '/keys']) {
      expect(
        (await t.fetch(`${t.issuer}${path}`, { headers: { authorization: `Bearer ${apiKey}` } })).status,
      ).toBe(200);
      const bad = await t.fetch(`${t.issuer}${path}`, { headers: { authorization: 'Bearer not-a-token' } });
      expect(bad.status).toBe(401);
      expect(bad.headers.get('www-authenticate')).toBe('Bearer realm="idgate", error="invalid_token"');
      expect(((await bad.json()) as { code: string }).code).toBe('authorization_invalid');
      const revoked = await t.fetch(`${t.issuer}${path}`, {
        headers: { authorization: `Bearer idg_aaaaaaaa_${'b'.repeat(43)}` },
      });
      expect(revoked.status).toBe(401);
    }
  });

  it('lets browser relying parties read it cross-origin', async () => {
    const response = await t.fetch(`${t.issuer}/keys`, { headers: { origin: 'https://app.example' } });
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('publishes a rotated key before it is used and keeps the old one', async () => {
    const { rotateSigningKey } = await import('@idgate/core');
    const { services } = t;
    const before = Jwks.parse(await (await t.fetch(`${t.issuer}/keys`)).json());
    const { created } = await rotateSigningKey(services.storage.signingKeys, services.keyPolicy, new Date());
    await services.reloadKeys();
    const after = Jwks.parse(await (await t.fetch(`${t.issuer}/keys`)).json());
    expect(after.keys.map((k) => k.kid).sort()).toEqual(
      [...before.keys.map((k) => k.kid), created.kid].sort(),
    );
  });

  it('serves an OpenAPI document in which TokenReview is deprecated', async () => {
    const document = (await (await t.fetch(`${t.baseUrl}/openapi.json`)).json()) as {
      openapi: string;
      paths: Record<string, Record<string, { deprecated?: boolean }>>;
    };
    expect(document.openapi).toBe('3.1.0');
    expect(document.paths['/oauth/authenticate']?.post?.deprecated).toBe(true);
    expect(Object.keys(document.paths)).toEqual(
      expect.arrayContaining(['/oauth/token', '/oauth/keys', '/oauth/.well-known/openid-configuration']),
    );
  });

  it('reports health and readiness', async () => {
    expect(await (await t.fetch(`${t.baseUrl}/healthz`)).json()).toEqual({ status: 'ok' });
    const ready = await t.fetch(`${t.baseUrl}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({
      status: 'ok',
      checks: { database: 'ok', migrations: 'ok', keys: 'ok' },
    });
  });

  it('answers an unknown path with a 404 problem', async () => {
    const response = await t.fetch(`${t.baseUrl}/oauth/nope?token=secret`);
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await response.json()).toMatchObject({
      status: 404,
      code: 'not_found',
      detail: 'no route for GET /oauth/nope',
    });
  });
});
