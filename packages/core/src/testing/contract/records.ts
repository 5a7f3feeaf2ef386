import type { InteractionRecord } from '../../authorize/interaction.js';
import type {
  ApiKeyRecord,
  AuthorizationCodeRecord,
  BrowserSessionRecord,
  ClientRecord,
  DeviceAuthorizationRecord,
  GrantRecord,
  GrantUpstream,
  IdentityProviderRecord,
  LinkedIdentityRecord,
  LoginAttemptRecord,
  LoginTransactionRecord,
  NewUser,
  RefreshTokenRecord,
  SigningKeyRecord,
} from '../../model.js';

// The records the contract stores: every field set, so a round trip that drops one shows.

export const at = (iso: string): Date => new Date(iso);

export function newUser(overrides: Partial<NewUser> = {}): NewUser {
  return {
    id: 'u-alice',
    username: 'alice',
    email: 'alice@example.com',
    displayName: 'Alice Liddell',
    groups: ['devs', 'platform-admins'],
    passwordHash: '$argon2id$v=19$m=65536,t=3,p=4$c2FsdA$aGFzaA',
    createdAt: at('2026-01-02T03:04:05.678Z'),
    ...overrides,
  };
}

export function newClient(overrides: Partial<ClientRecord> = {}): ClientRecord {
  return {
    clientId: 'ci',
    name: 'CI pipeline',
    secretHash: 'q1w2e3r4t5y6u7i8o9p0q1w2e3r4t5y6u7i8o9p0q1w',
    public: false,
    trusted: true,
    redirectUris: ['https://app.example.com/cb', 'http://127.0.0.1:8000/cb'],
    postLogoutRedirectUris: ['https://app.example.com/signed-out'],
    grantTypes: ['client_credentials', 'refresh_token'],
    scopes: ['openid', 'groups'],
    audiences: ['kubernetes'],
    accessTokenTtl: 3600,
    refreshTokenTtl: 2_592_000,
    previousSecretHash: null,
    previousSecretExpiresAt: null,
    createdAt: at('2026-01-01T00:00:00.001Z'),
    ...overrides,
  };
}

export function newApiKey(overrides: Partial<ApiKeyRecord> = {}): ApiKeyRecord {
  return {
    id: 'k-1',
    name: 'apiserver',
    prefix: 'idg_ab12cd34',
    hash: 'aGFzaC1vZi10aGUtd2hvbGUta2V5',
    scopes: ['tokenreview'],
    cluster: null,
    createdAt: at('2026-01-01T00:00:00.000Z'),
    lastUsedAt: null,
    expiresAt: null,
    revokedAt: null,
    ...overrides,
  };
}

export function newSigningKey(overrides: Partial<SigningKeyRecord> = {}): SigningKeyRecord {
  return {
    kid: 'kid-1',
    alg: 'ES256',
    publicJwk: { kty: 'EC', crv: 'P-256', x: 'eHg', y: 'eXk', use: 'sig', kid: 'kid-1' },
    sealedPrivateJwk: 'v1.sealed.payload',
    createdAt: at('2026-01-01T00:00:00.000Z'),
    retiredAt: null,
    publishedUntil: null,
    ...overrides,
  };
}

/** The upstream identity of a sign-in through the `corp` provider (its state as sealed). */
export function newUpstream(overrides: Partial<GrantUpstream> = {}): GrantUpstream {
  return {
    provider: 'corp',
    subject: 'u-100',
    validatedAt: at('2026-01-01T09:59:00.000Z'),
    checkedAt: at('2026-01-01T10:14:00.000Z'),
    sealedState: 'v1.aXY.c2VhbGVk',
    ...overrides,
  };
}

export function newGrant(overrides: Partial<GrantRecord> = {}): GrantRecord {
  return {
    id: 'g-1',
    userId: 'u-alice',
    clientId: 'ci',
    scope: ['openid', 'offline_access'],
    authTime: at('2026-01-01T09:59:00.000Z'),
    sessionId: 's-1',
    createdAt: at('2026-01-01T10:00:00.000Z'),
    expiresAt: at('2026-01-31T10:00:00.000Z'),
    revokedAt: null,
    lastUsedAt: null,
    lastUsedAddress: null,
    upstream: null,
    amr: null,
    resources: null,
    ...overrides,
  };
}

export function newCode(overrides: Partial<AuthorizationCodeRecord> = {}): AuthorizationCodeRecord {
  return {
    hash: 'Y29kZS1oYXNo',
    clientId: 'ci',
    userId: 'u-alice',
    redirectUri: 'https://app.example.com/cb',
    scope: ['openid', 'profile'],
    nonce: 'n-0S6_WzA2Mj',
    resource: null,
    codeChallenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    codeChallengeMethod: 'S256',
    authTime: at('2026-01-01T09:59:00.000Z'),
    sessionId: 's-1',
    upstream: null,
    amr: null,
    grantId: null,
    createdAt: at('2026-01-01T10:00:00.000Z'),
    expiresAt: at('2026-01-01T10:01:00.000Z'),
    consumedAt: null,
    ...overrides,
  };
}

export function newRefreshToken(overrides: Partial<RefreshTokenRecord> = {}): RefreshTokenRecord {
  return {
    hash: 'cmVmcmVzaC1oYXNo',
    grantId: 'g-1',
    clientId: 'ci',
    userId: 'u-alice',
    scope: ['openid', 'offline_access'],
    createdAt: at('2026-01-01T10:00:00.000Z'),
    expiresAt: at('2026-01-15T10:00:00.000Z'),
    usedAt: null,
    ...overrides,
  };
}

export function newSession(overrides: Partial<BrowserSessionRecord> = {}): BrowserSessionRecord {
  return {
    id: 's-1',
    secretHash: 'c2Vzc2lvbi1zZWNyZXQtaGFzaA',
    userId: 'u-alice',
    authTime: at('2026-01-01T09:59:00.000Z'),
    createdAt: at('2026-01-01T09:59:00.000Z'),
    expiresAt: at('2026-01-02T09:59:00.000Z'),
    endedAt: null,
    sourceAddress: null,
    userAgent: null,
    upstream: null,
    amr: null,
    ...overrides,
  };
}

export function newInteraction(overrides: Partial<InteractionRecord> = {}): InteractionRecord {
  return {
    id: 'i-1',
    secretHash: 'aW50ZXJhY3Rpb24tc2VjcmV0',
    request: {
      clientId: 'ci',
      redirectUri: 'https://app.example.com/cb',
      scope: ['openid'],
      state: 'xyz',
      prompt: ['login', 'consent'],
      resource: ['https://k8s.example.com', 'https://api.example.com'],
    },
    userId: null,
    authTime: null,
    amr: null,
    pendingUserId: null,
    pendingUpstream: null,
    csrfTokenHash: 'csrf-token-hash-1',
    createdAt: at('2026-01-01T10:00:00.000Z'),
    expiresAt: at('2026-01-01T10:30:00.000Z'),
    ...overrides,
  };
}

export function newLoginAttempt(overrides: Partial<LoginAttemptRecord> = {}): LoginAttemptRecord {
  return {
    id: 'a-1',
    username: 'alice',
    userId: 'u-alice',
    sourceAddress: '203.0.113.7',
    provider: 'password',
    success: false,
    reason: 'invalid_credentials',
    createdAt: at('2026-01-01T10:00:00.000Z'),
    clientId: null,
    familiar: false,
    ...overrides,
  };
}

export function newIdentityProvider(overrides: Partial<IdentityProviderRecord> = {}): IdentityProviderRecord {
  return {
    name: 'github',
    type: 'github',
    config: {
      name: 'github',
      type: 'github',
      clientId: 'Iv1.0123456789abcdef',
      clientSecret: 'v1.aXY.c2VhbGVk',
      allowedOrganizations: ['acme'],
      loadTeams: true,
    },
    disabled: false,
    createdAt: at('2026-01-01T00:00:00.000Z'),
    updatedAt: at('2026-01-01T00:00:00.000Z'),
    ...overrides,
  };
}

export function newLinkedIdentity(overrides: Partial<LinkedIdentityRecord> = {}): LinkedIdentityRecord {
  return {
    provider: 'github',
    subject: '583231',
    userId: 'u-alice',
    username: 'octocat',
    email: 'octocat@example.com',
    groups: ['github:acme', 'github:acme:platform'],
    linkedAt: at('2026-01-01T10:00:00.000Z'),
    lastLoginAt: null,
    ...overrides,
  };
}

export function newLoginTransaction(overrides: Partial<LoginTransactionRecord> = {}): LoginTransactionRecord {
  return {
    stateHash: 'c3RhdGUtaGFzaA',
    provider: 'github',
    bindingHash: 'YmluZGluZy1oYXNo',
    nonce: 'n-0S6_WzA2Mj',
    codeVerifier: 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk',
    interactionId: 'i-1',
    createdAt: at('2026-01-01T10:00:00.000Z'),
    expiresAt: at('2026-01-01T10:10:00.000Z'),
    consumedAt: null,
    ...overrides,
  };
}

export function newDevice(overrides: Partial<DeviceAuthorizationRecord> = {}): DeviceAuthorizationRecord {
  return {
    deviceCodeHash: 'dc-hash-1',
    userCode: 'BCDFGHJK',
    clientId: 'kubectl',
    scope: ['openid', 'offline_access'],
    resource: ['cluster-a'],
    status: 'pending',
    userId: null,
    authTime: null,
    sessionId: null,
    upstream: null,
    amr: null,
    createdAt: at('2026-01-01T10:00:00.000Z'),
    expiresAt: at('2026-01-01T10:10:00.000Z'),
    lastPolledAt: null,
    interval: 5,
    consumedAt: null,
    ...overrides,
  };
}
