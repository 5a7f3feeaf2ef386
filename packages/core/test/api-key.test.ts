import { describe, expect, it } from 'vitest';
import {
  type ApiKeyError,
  apiKeyFromAuthorization,
  authenticateApiKey,
  generateApiKey,
} from '../src/api-keys/api-key.js';
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

  it('challenge a missing key bare and a bad one with invalid_token (RFC 6750 §3.1), a wrong scope not at all', async () => {
    const { key, find } = await stored(['admin']);
    const missing = await failure(authenticateApiKey(undefined, 'admin', find));
    expect(missing.headers).toEqual({ 'WWW-Authenticate': 'Bearer realm="idgate"' });
    const bad = await failure(authenticateApiKey('nope', 'admin', find));
    expect(bad.headers).toEqual({ 'WWW-Authenticate': 'Bearer realm="idgate", error="invalid_token"' });
    expect(bad.toJSON()).toEqual({ error: 'invalid_token', error_description: 'the API key is not valid' });
    const scope = await failure(authenticateApiKey(key, 'tokenreview', find));
    expect(scope.headers).toEqual({});
    expect(scope.toJSON()).toEqual({
      error: 'insufficient_scope',
      error_description: 'the API key lacks the "tokenreview" scope',
    });
  });

  it('are read from "Bearer <key>" in any case, or bare', () => {
    expect(apiKeyFromAuthorization('Bearer abc')).toBe('abc');
    expect(apiKeyFromAuthorization('bearer   abc ')).toBe('abc');
    expect(apiKeyFromAuthorization('abc')).toBe('abc');
    expect(apiKeyFromAuthorization('  ')).toBeUndefined();
    expect(apiKeyFromAuthorization(undefined)).toBeUndefined();
  });
});
