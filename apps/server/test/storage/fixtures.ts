import type {
  ApiKeyRecord,
  AuthorizationCodeRecord,
  BrowserSessionRecord,
  ClientRecord,
  GrantRecord,
  InteractionRecord,
  NewUser,
  RefreshTokenRecord,
  Storage,
} from '@idgate/core';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { createSqlStorage, type Database, migrateToLatest, openDatabase } from '../../src/storage/index.js';
import { TABLES } from '../../src/storage/schema.js';
import type { TestDatabase, TestDatabaseKind } from '../helpers/databases.js';

export interface StorageFixture {
  database: Database;
  storage: Storage;
}

/**
 * One migrated database per describe block, emptied before every test.
 * @returns a getter, valid inside tests and hooks.
 */
export function useStorage(kind: TestDatabaseKind): () => StorageFixture {
  let created: TestDatabase | undefined;
  let fixture: StorageFixture | undefined;
  beforeAll(async () => {
    created = await kind.create();
    const database = await openDatabase(created.url);
    await migrateToLatest(database);
    fixture = { database, storage: createSqlStorage(database) };
  });
  beforeEach(async () => {
    const { db } = get().database;
    for (const table of TABLES) await db.deleteFrom(table).execute();
  });
  afterAll(async () => {
    await fixture?.storage.close();
    await created?.drop();
  });
  const get = () => {
    if (fixture === undefined) throw new Error('storage fixture used outside a test');
    return fixture;
  };
  return get;
}

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
    csrfTokenHash: 'csrf-token-hash-1',
    createdAt: at('2026-01-01T10:00:00.000Z'),
    expiresAt: at('2026-01-01T10:30:00.000Z'),
    ...overrides,
  };
}
