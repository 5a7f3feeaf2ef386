import { API_KEY_ROLES, ApiKeyRole, ApiKeyScope } from '@idgate/schema';
import { describe, expect, it } from 'vitest';
import {
  type ApiKeyError,
  apiKeyFromAuthorization,
  authenticateApiKey,
  generateApiKey,
} from '../src/api-keys/api-key.js';
import { apiKeyScopes, holdsScope } from '../src/api-keys/scopes.js';
import type { ApiKeyRecord } from '../src/model.js';

async function stored(scopes: ApiKeyRecord['scopes'] = ['tokenreview']) {
  const generated = await generateApiKey();
  const record: ApiKeyRecord = {
    id: 'k1',
    name: 'apiserver',
    prefix: generated.prefix,
    hash: generated.hash,
    scopes,
    cluster: null,
    createdAt: new Date(),
    lastUsedAt: null,
    revokedAt: null,
  };
  const find = async (prefix: string) => (prefix === record.prefix ? record : undefined);
  return { key: generated.key, record, find };
}

async function failure(promise: Promise<unknown>): Promise<ApiKeyError> {
  return promise.then(
    () => {
      throw new Error('expected a refusal');
    },
    (error: ApiKeyError) => error,
  );
}

describe('API keys', () => {
  it('have a public prefix and 256 random bits, and only the hash is kept', async () => {
    const { key, prefix, hash } = await generateApiKey();
    expect(key).toMatch(/^idg_[a-z2-7]{8}_[A-Za-z0-9_-]{43}$/);
    expect(key.startsWith(`${prefix}_`)).toBe(true);
    expect(hash).not.toContain(key.slice(13));
  });

  it('authenticate with the right scope', async () => {
    const { key, find, record } = await stored();
    expect(await authenticateApiKey(key, 'tokenreview', find)).toBe(record);
  });

  it('refuse a missing, malformed, unknown, altered or revoked key with 401 and a wrong scope with 403', async () => {
    const { key, find, record } = await stored(['admin']);
    expect((await failure(authenticateApiKey(undefined, 'admin', find))).problemCode).toBe('api_key_missing');
    expect((await failure(authenticateApiKey('nope', 'admin', find))).status).toBe(401);
    const altered = `${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`;
    expect((await failure(authenticateApiKey(altered, 'admin', find))).problemCode).toBe('api_key_invalid');
    expect((await failure(authenticateApiKey(`idg_aaaaaaaa_${'a'.repeat(43)}`, 'admin', find))).status).toBe(
      401,
    );
    const scope = await failure(authenticateApiKey(key, 'tokenreview', find));
    expect([scope.status, scope.problemCode]).toEqual([403, 'api_key_scope']);
    record.revokedAt = new Date();
    expect((await failure(authenticateApiKey(key, 'admin', find))).problemCode).toBe('api_key_invalid');
  });

  it('challenge a missing key bare, a bad one with invalid_token and a wrong scope with insufficient_scope naming it (RFC 6750 §3.1)', async () => {
    const { key, find } = await stored(['admin']);
    const missing = await failure(authenticateApiKey(undefined, 'admin', find));
    expect(missing.headers).toEqual({ 'WWW-Authenticate': 'Bearer realm="idgate"' });
    const bad = await failure(authenticateApiKey('nope', 'admin', find));
    expect(bad.headers).toEqual({ 'WWW-Authenticate': 'Bearer realm="idgate", error="invalid_token"' });
    expect(bad.toJSON()).toEqual({ error: 'invalid_token', error_description: 'the API key is not valid' });
    const scope = await failure(authenticateApiKey(key, 'tokenreview', find));
    expect(scope.headers).toEqual({
      'WWW-Authenticate': 'Bearer realm="idgate", error="insufficient_scope", scope="tokenreview"',
    });
    expect(scope.problemMembers).toEqual({ scope: 'tokenreview' });
    expect(bad.problemMembers).toBeUndefined();
    expect(scope.toJSON()).toEqual({
      error: 'insufficient_scope',
      error_description: 'the API key lacks the "tokenreview" scope',
    });
  });

  it('hold the admin API scopes they carry, every one of them with admin, and tokenreview only by name', async () => {
    const admin = await stored(['admin']);
    for (const scope of ['users:read', 'users:write', 'keys:rotate', 'api-keys:write', 'audit:read'] as const)
      expect((await authenticateApiKey(admin.key, scope, admin.find)).id).toBe('k1');
    const desk = await stored(['users:read', 'users:unlock']);
    expect(await authenticateApiKey(desk.key, 'users:unlock', desk.find)).toBe(desk.record);
    for (const scope of ['users:write', 'admin', 'tokenreview'] as const) {
      const refused = await failure(authenticateApiKey(desk.key, scope, desk.find));
      expect([refused.status, refused.scope, refused.description]).toEqual([
        403,
        scope,
        `the API key lacks the "${scope}" scope`,
      ]);
    }
    expect(holdsScope(['admin'], 'tokenreview')).toBe(false);
    expect(holdsScope(['tokenreview'], 'users:read')).toBe(false);
    expect(holdsScope(['users:read'], 'admin')).toBe(false);
  });

  it('are made of scopes and roles, each scope once, in the order of ApiKeyScope', () => {
    expect(apiKeyScopes({ scopes: ['audit:read', 'tokenreview', 'audit:read'] })).toEqual([
      'tokenreview',
      'audit:read',
    ]);
    expect(apiKeyScopes({ roles: ['helpdesk'] })).toEqual([
      'users:read',
      'users:unlock',
      'users:password',
      'sessions:read',
      'sessions:write',
    ]);
    expect(apiKeyScopes({ roles: ['auditor', 'helpdesk'] })).toEqual(
      ApiKeyScope.options.filter(
        (scope) =>
          scope.endsWith(':read') || ['users:unlock', 'users:password', 'sessions:write'].includes(scope),
      ),
    );
    // admin holds the admin API's scopes: they are not repeated beside it.
    expect(apiKeyScopes({ scopes: ['users:read', 'tokenreview'], roles: ['admin'] })).toEqual([
      'tokenreview',
      'admin',
    ]);
    for (const role of ApiKeyRole.options)
      expect(apiKeyScopes({ roles: [role] })).toEqual(
        ApiKeyScope.options.filter((scope) => API_KEY_ROLES[role].includes(scope)),
      );
  });

  it('are read from "Bearer <key>" in any case, or bare', () => {
    expect(apiKeyFromAuthorization('Bearer abc')).toBe('abc');
    expect(apiKeyFromAuthorization('bearer   abc ')).toBe('abc');
    expect(apiKeyFromAuthorization('abc')).toBe('abc');
    expect(apiKeyFromAuthorization('  ')).toBeUndefined();
    expect(apiKeyFromAuthorization(undefined)).toBeUndefined();
  });
});
