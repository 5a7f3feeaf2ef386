import type { JSONWebKeySet } from 'jose';
import { createLocalJWKSet, decodeJwt, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { createAuditBatcher } from '../src/audit/batcher.js';
import { OAuthProtocolError } from '../src/errors.js';
import type { TokenEndpointContext } from '../src/grants/context.js';
import { handleTokenRequest } from '../src/grants/token-endpoint.js';
import type { ClientRecord } from '../src/model.js';
import { StorageUnavailableError } from '../src/ports/storage.js';
import { hashSecret } from '../src/secrets.js';
import { accessTokenHash } from '../src/tokens/id-token.js';
import { client, ISSUER, keyRing, manualClock, seededStorage } from './helpers.js';

const SECRET = 'client-secret-0123456789';

async function setup(overrides: Partial<ClientRecord> = {}) {
  const clock = manualClock();
  const ring = await keyRing('RS256', clock);
  const { storage, hasher } = await seededStorage();
  await storage.clients.create(client({ secretHash: await hashSecret(SECRET), ...overrides }));
  const context: TokenEndpointContext = {
    issuer: ISSUER,
    keys: ring,
    clock,
    findClient: (id) => storage.clients.findById(id),
    passwords: {
      findUserByUsername: (u) => storage.users.findByUsername(u),
      hasher,
      dummyHash: await hasher.hash('dummy'),
    },
    storage,
    lifetimes: { idToken: 3600, grant: 86_400 * 90, maxAccessToken: 3600 },
    newGrantId: () => 'grant-1',
  };
  return { ring, clock, storage, context };
}

const basic = (id: string, secret: string) => `Basic ${btoa(`${id}:${secret}`)}`;

async function refusal(promise: Promise<unknown>): Promise<OAuthProtocolError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(OAuthProtocolError);
  return error as OAuthProtocolError;
}

describe('RFC 6749 §4.3 password grant', () => {
  it('issues an access token and an OIDC ID token with at_hash for a trusted client', async () => {
    const { context, ring, clock } = await setup();
    const response = await handleTokenRequest(
      {
        grant_type: 'password',
        username: 'alice',
        password: 'correct horse',
        scope: 'openid profile groups',
      },
      basic('cli', SECRET),
      context,
    );
    expect(response).toMatchObject({ token_type: 'Bearer', expires_in: 600, scope: 'openid profile groups' });
    const access = decodeJwt(response.access_token);
    expect(access).toMatchObject({ sub: 'u-alice', client_id: 'cli', aud: 'cli', sid: 'grant-1' });
    const { payload } = await jwtVerify(
      response.id_token as string,
      createLocalJWKSet(ring.jwks() as JSONWebKeySet),
      {
        issuer: ISSUER,
        audience: 'cli',
        currentDate: new Date(clock.now()),
      },
    );
    expect(payload).toMatchObject({
      sub: 'u-alice',
      azp: 'cli',
      sid: 'grant-1',
      preferred_username: 'Alice',
      name: 'Alice A.',
      groups: ['dev', 'ops', 'dev'],
      at_hash: await accessTokenHash(response.access_token, 'RS256'),
    });
    expect(payload).not.toHaveProperty('email');
  });

  it('omits the ID token without openid', async () => {
    const { context } = await setup();
    const response = await handleTokenRequest(
      { grant_type: 'password', username: 'Alice', password: 'correct horse', scope: 'api' },
      basic('cli', SECRET),
      context,
    );
    expect(response.id_token).toBeUndefined();
  });

  it('answers the same invalid_grant for a wrong password and an unknown user', async () => {
    const { context } = await setup();
    const wrong = await refusal(
      handleTokenRequest(
        { grant_type: 'password', username: 'alice', password: 'nope' },
        basic('cli', SECRET),
        context,
      ),
    );
    const unknown = await refusal(
      handleTokenRequest(
        { grant_type: 'password', username: 'mallory', password: 'nope' },
        basic('cli', SECRET),
        context,
      ),
    );
    expect(wrong.toJSON()).toEqual({
      error: 'invalid_grant',
      error_description: 'invalid username or password',
    });
    expect(unknown.toJSON()).toEqual(wrong.toJSON());
    expect(wrong.status).toBe(400);
  });

  it('refuses a disabled account only once the password is right', async () => {
    const { context, storage } = await setup();
    await storage.users.update('u-alice', { disabled: true, updatedAt: new Date() });
    const right = await refusal(
      handleTokenRequest(
        { grant_type: 'password', username: 'alice', password: 'correct horse' },
        basic('cli', SECRET),
        context,
      ),
    );
    expect(right.description).toBe('the account is disabled');
    const wrong = await refusal(
      handleTokenRequest(
        { grant_type: 'password', username: 'alice', password: 'x' },
        basic('cli', SECRET),
        context,
      ),
    );
    expect(wrong.description).toBe('invalid username or password');
  });

  it('refuses an untrusted client with unauthorized_client', async () => {
    const { context } = await setup({ trusted: false });
    const error = await refusal(
      handleTokenRequest(
        { grant_type: 'password', username: 'alice', password: 'correct horse' },
        basic('cli', SECRET),
        context,
      ),
    );
    expect(error.code).toBe('unauthorized_client');
  });

  it('refuses scopes the client is not allowed', async () => {
    const { context } = await setup({ scopes: ['openid'] });
    const error = await refusal(
      handleTokenRequest(
        { grant_type: 'password', username: 'alice', password: 'correct horse', scope: 'openid admin' },
        basic('cli', SECRET),
        context,
      ),
    );
    expect(error.toJSON()).toEqual({
      error: 'invalid_scope',
      error_description: 'scope not allowed for this client: admin',
    });
  });
});

describe('RFC 6749 §4.4 client credentials grant', () => {
  it('issues a token whose subject is the client, without ID or refresh token', async () => {
    const { context } = await setup();
    const response = await handleTokenRequest(
      { grant_type: 'client_credentials', client_id: 'cli', client_secret: SECRET },
      undefined,
      context,
    );
    expect(decodeJwt(response.access_token)).toMatchObject({ sub: 'cli', client_id: 'cli', scope: 'api' });
    expect(response).not.toHaveProperty('id_token');
    expect(response).not.toHaveProperty('refresh_token');
  });

  it('answers a token only with its token.issued event stored, concurrent ones grouped by the batcher', async () => {
    const { context, storage } = await setup();
    const batched = { ...context, auditBatcher: createAuditBatcher(storage) };
    const responses = await Promise.all(
      Array.from({ length: 5 }, () =>
        handleTokenRequest({ grant_type: 'client_credentials' }, basic('cli', SECRET), batched),
      ),
    );
    const events = await storage.auditEvents.list({ limit: 10 });
    expect(events.map((e) => (e.type === 'token.issued' ? e.details.jti : e.type)).sort()).toEqual(
      responses.map((r) => decodeJwt(r.access_token).jti).sort(),
    );
    expect(events[0]).toMatchObject({
      actor: { kind: 'client', id: 'cli' },
      subject: null,
      clientId: 'cli',
      details: { grantType: 'client_credentials', scopes: ['api'], audience: ['cli'], grantId: null },
    });
  });

  it('issues no token when its audit event cannot be stored', async () => {
    const { context, storage } = await setup();
    const down = {
      ...storage,
      auditEvents: {
        ...storage.auditEvents,
        append: () => Promise.reject(new StorageUnavailableError('unreachable')),
      },
    };
    for (const unstored of [
      { ...context, storage: down },
      { ...context, auditBatcher: createAuditBatcher({ transaction: (work) => work(down) }) },
    ]) {
      const error = await handleTokenRequest(
        { grant_type: 'client_credentials' },
        basic('cli', SECRET),
        unstored,
      ).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(StorageUnavailableError);
      expect((error as StorageUnavailableError).status).toBe(503);
    }
  });

  it('refuses end-user scopes', async () => {
    const { context } = await setup();
    const error = await refusal(
      handleTokenRequest(
        { grant_type: 'client_credentials', scope: 'openid' },
        basic('cli', SECRET),
        context,
      ),
    );
    expect(error.code).toBe('invalid_scope');
  });

  it('puts RFC 8707 resources into aud only when the client may ask for them', async () => {
    const { context } = await setup({ audiences: ['https://api.example'] });
    const ok = await handleTokenRequest(
      { grant_type: 'client_credentials', resource: 'https://api.example' },
      basic('cli', SECRET),
      context,
    );
    expect(decodeJwt(ok.access_token).aud).toBe('https://api.example');
    const error = await refusal(
      handleTokenRequest(
        { grant_type: 'client_credentials', resource: ['https://api.example', 'https://evil.example'] },
        basic('cli', SECRET),
        context,
      ),
    );
    expect(error.code).toBe('invalid_target');
  });
});

describe('RFC 6749 §2.3 client authentication', () => {
  it('accepts client_secret_post and form-urlencoded Basic credentials', async () => {
    const { context, storage } = await setup();
    await storage.clients.create(
      client({
        clientId: 'a b:c%',
        secretHash: await hashSecret('s p:é'),
        grantTypes: ['client_credentials'],
      }),
    );
    const encoded = `Basic ${Buffer.from(`${encodeURIComponent('a b:c%').replace(/%20/g, '+')}:${encodeURIComponent('s p:é').replace(/%20/g, '+')}`).toString('base64')}`;
    const response = await handleTokenRequest({ grant_type: 'client_credentials' }, encoded, context);
    expect(decodeJwt(response.access_token).client_id).toBe('a b:c%');
  });

  it.each([
    ['wrong secret', { grant_type: 'client_credentials' }, basic('cli', 'wrong')],
    ['unknown client', { grant_type: 'client_credentials' }, basic('ghost', SECRET)],
    ['no credentials', { grant_type: 'client_credentials' }, undefined],
    ['a non-Basic scheme', { grant_type: 'client_credentials' }, 'Bearer abc'],
    ['broken base64', { grant_type: 'client_credentials' }, 'Basic %%%'],
    ['confidential client without secret', { grant_type: 'client_credentials', client_id: 'cli' }, undefined],
  ])('answers 401 invalid_client with a Basic challenge for %s', async (_name, form, authorization) => {
    const { context } = await setup();
    const error = await refusal(handleTokenRequest(form, authorization, context));
    expect(error.code).toBe('invalid_client');
    expect(error.status).toBe(401);
    expect(error.headers['WWW-Authenticate']).toMatch(/^Basic /);
  });

  it('refuses two authentication methods in one request', async () => {
    const { context } = await setup();
    const error = await refusal(
      handleTokenRequest(
        { grant_type: 'client_credentials', client_secret: SECRET },
        basic('cli', SECRET),
        context,
      ),
    );
    expect(error.toJSON()).toEqual({
      error: 'invalid_request',
      error_description: 'use only one client authentication method',
    });
  });

  it('refuses a grant the client is not registered for', async () => {
    const { context } = await setup({ grantTypes: ['client_credentials'] });
    const error = await refusal(
      handleTokenRequest(
        { grant_type: 'password', username: 'alice', password: 'correct horse' },
        basic('cli', SECRET),
        context,
      ),
    );
    expect(error.code).toBe('unauthorized_client');
  });
});

describe('RFC 6749 §5.2 request errors', () => {
  it.each([
    [{}, 'invalid_request', 'grant_type is required'],
    [
      { grant_type: 'urn:ietf:params:oauth:grant-type:device_code' },
      'invalid_request',
      'device_code is required',
    ],
    [{ grant_type: 'urn:ietf:params:oauth:grant-type:saml2-bearer' }, 'unsupported_grant_type', undefined],
    [{ grant_type: 'implicit' }, 'unsupported_grant_type', undefined],
    [{ grant_type: 'password', username: 'alice' }, 'invalid_request', 'password is required'],
    [
      { grant_type: 'client_credentials', scope: ['a', 'b'] },
      'invalid_request',
      'parameter scope must not be repeated',
    ],
    [{ grant_type: 'client_credentials', scope: 'bad"scope' }, 'invalid_scope', undefined],
  ])('%j → %s', async (form, code, description) => {
    const { context } = await setup();
    const error = await refusal(handleTokenRequest(form, basic('cli', SECRET), context));
    expect(error.code).toBe(code);
    expect(error.status).toBe(400);
    if (description !== undefined) expect(error.description).toBe(description);
  });
});
