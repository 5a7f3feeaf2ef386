import { describe, expect, it } from 'vitest';
import {
  ApiKey,
  ApiKeyScope,
  GrantType,
  GroupName,
  InitResult,
  OAuthClient,
  SigningAlgorithm,
  SigningKeyInfo,
  User,
  Username,
} from '../src/index.js';
import { rejectedAt } from './rejected-at.js';

const at = '2026-01-01T00:00:00.000Z';

describe('idgate Username', () => {
  it.each(['alice', 'alice.smith@example.com', 'a', '0day', 'svc_ci-01', 'A'.repeat(128)])(
    'accepts %j',
    (name) => {
      expect(Username.parse(name)).toBe(name);
    },
  );

  it.each(['', '.alice', '-alice', '@alice', 'al ice', 'alice!', 'alice:x', 'jürgen', 'A'.repeat(129)])(
    'rejects %j',
    (name) => {
      expect([...new Set(rejectedAt(Username, name))]).toEqual(['']);
    },
  );
});

describe('idgate GroupName (Kubernetes reserves system:)', () => {
  it.each(['platform-admins', 'org:team', 'system', 'my-system:x', 'x'.repeat(256)])(
    'accepts %j',
    (group) => {
      expect(GroupName.parse(group)).toBe(group);
    },
  );

  it.each(['system:masters', 'system:authenticated', 'system:serviceaccounts', 'system:'])(
    'rejects %j',
    (group) => {
      const result = GroupName.safeParse(group);
      expect(result.success).toBe(false);
      expect(result.error?.issues.map((i) => i.message)).toEqual([
        'must not start with "system:", which Kubernetes reserves',
      ]);
    },
  );

  it.each(['', 'a b', 'tab\there', 'café', 'x'.repeat(257)])('rejects %j', (group) => {
    expect([...new Set(rejectedAt(GroupName, group))]).toEqual(['']);
  });
});

describe('idgate enums', () => {
  it('ApiKeyScope', () => {
    expect(ApiKeyScope.options.slice(0, 3)).toEqual(['tokenreview', 'admin', 'users:read']);
    expect(ApiKeyScope.parse('tokenreview')).toBe('tokenreview');
    expect(rejectedAt(ApiKeyScope, 'TokenReview')).toEqual(['']);
  });

  it('GrantType', () => {
    expect(GrantType.options).toEqual([
      'authorization_code',
      'refresh_token',
      'client_credentials',
      'password',
      'urn:ietf:params:oauth:grant-type:device_code',
      'urn:ietf:params:oauth:grant-type:token-exchange',
    ]);
    expect(rejectedAt(GrantType, 'implicit')).toEqual(['']);
  });

  it('SigningAlgorithm', () => {
    expect(SigningAlgorithm.options).toEqual(['RS256', 'ES256', 'EdDSA']);
    for (const alg of ['HS256', 'none', 'rs256']) expect(rejectedAt(SigningAlgorithm, alg)).toEqual(['']);
  });
});

describe('idgate admin User', () => {
  const user = {
    id: 'u1',
    username: 'alice',
    email: null,
    displayName: 'Alice',
    groups: ['dev'],
    disabled: false,
    createdAt: at,
    updatedAt: '2026-01-02T03:04:05+02:00',
    etag: '"0123456789abcdef"',
  };

  it('accepts a user with ISO 8601 timestamps (Z or offset)', () => {
    expect(User.parse(user)).toEqual(user);
  });

  it('strips a password hash rather than passing it through', () => {
    expect(User.parse({ ...user, passwordHash: '$argon2id$...' })).toEqual(user);
  });

  it('rejects a date-only timestamp, a missing nullable and a string flag', () => {
    expect(rejectedAt(User, { ...user, createdAt: '2026-01-01' })).toEqual(['createdAt']);
    const { email: _email, ...noEmail } = user;
    expect(rejectedAt(User, noEmail)).toEqual(['email']);
    expect(rejectedAt(User, { ...user, disabled: 'false' })).toEqual(['disabled']);
  });
});

describe('idgate admin OAuthClient', () => {
  const client = {
    clientId: 'c',
    name: 'CI',
    public: false,
    trusted: true,
    redirectUris: ['https://app.example.com/cb'],
    postLogoutRedirectUris: ['https://app.example.com/bye'],
    grantTypes: ['client_credentials', 'password'],
    scopes: ['openid'],
    audiences: ['kubernetes'],
    accessTokenTtl: 3600,
    refreshTokenTtl: 2_592_000,
    createdAt: at,
    previousSecretExpiresAt: null,
    requireMfa: true,
    etag: '"0123456789abcdef"',
  };

  it('accepts a client and drops a secret', () => {
    expect(OAuthClient.parse({ ...client, clientSecret: 's' })).toEqual(client);
  });

  it('reads a client from an idgate without requireMfa as not requiring a second factor', () => {
    const { requireMfa: _set, ...older } = client;
    expect(OAuthClient.parse(older).requireMfa).toBe(false);
    expect(rejectedAt(OAuthClient, { ...client, requireMfa: 'yes' })).toEqual(['requireMfa']);
  });

  it('rejects an unknown grant type and non-positive or fractional TTLs', () => {
    expect(rejectedAt(OAuthClient, { ...client, grantTypes: ['implicit'] })).toEqual(['grantTypes.0']);
    expect(rejectedAt(OAuthClient, { ...client, accessTokenTtl: 0 })).toEqual(['accessTokenTtl']);
    expect(rejectedAt(OAuthClient, { ...client, refreshTokenTtl: 1.5 })).toEqual(['refreshTokenTtl']);
  });

  it('requires the post-logout redirect URIs (an empty list when there are none)', () => {
    const { postLogoutRedirectUris: _uris, ...withoutLogoutUris } = client;
    expect(rejectedAt(OAuthClient, withoutLogoutUris)).toEqual(['postLogoutRedirectUris']);
    expect(OAuthClient.parse({ ...client, postLogoutRedirectUris: [] }).postLogoutRedirectUris).toEqual([]);
  });
});

describe('idgate admin ApiKey and SigningKeyInfo', () => {
  const key = {
    id: 'k1',
    name: 'apiserver',
    prefix: 'idg_ab12cd34',
    scopes: ['tokenreview'],
    createdAt: at,
    lastUsedAt: null,
    revokedAt: at,
    expiresAt: null,
  };
  const signingKey = {
    kid: 'k1',
    alg: 'ES256',
    state: 'retired',
    createdAt: at,
    retiredAt: at,
    publishedUntil: at,
  };

  it('accepts an API key and a signing key', () => {
    expect(ApiKey.parse(key)).toEqual(key);
    expect(SigningKeyInfo.parse(signingKey)).toEqual(signingKey);
  });

  it('rejects an unknown scope, a missing lastUsedAt, an unknown state and algorithm', () => {
    expect(rejectedAt(ApiKey, { ...key, scopes: ['root'] })).toEqual(['scopes.0']);
    const { lastUsedAt: _l, ...noLastUsed } = key;
    expect(rejectedAt(ApiKey, noLastUsed)).toEqual(['lastUsedAt']);
    expect(rejectedAt(SigningKeyInfo, { ...signingKey, state: 'revoked' })).toEqual(['state']);
    expect(rejectedAt(SigningKeyInfo, { ...signingKey, alg: 'HS256' })).toEqual(['alg']);
  });
});

describe('idgate init --json result (strict)', () => {
  const init = {
    issuer: 'http://localhost:8080/oauth',
    apiKey: 'idg_x_y',
    admin: { username: 'admin', password: 'p' },
    client: { clientId: 'c', clientSecret: 's' },
  };

  it('accepts exactly the documented shape', () => {
    expect(InitResult.parse(init)).toEqual(init);
  });

  it('rejects an extra key at the top level and inside admin and client', () => {
    const top = InitResult.safeParse({ ...init, database: 'sqlite' });
    expect(top.success).toBe(false);
    expect(top.error?.issues.map((i) => [i.code, i.path])).toEqual([['unrecognized_keys', []]]);
    expect(rejectedAt(InitResult, { ...init, admin: { ...init.admin, email: 'a@b' } })).toEqual(['admin']);
    expect(rejectedAt(InitResult, { ...init, client: { ...init.client, name: 'x' } })).toEqual(['client']);
  });

  it('rejects a missing credential', () => {
    expect(rejectedAt(InitResult, { ...init, client: { clientId: 'c' } })).toEqual(['client.clientSecret']);
    const { apiKey: _k, ...noKey } = init;
    expect(rejectedAt(InitResult, noKey)).toEqual(['apiKey']);
  });
});
