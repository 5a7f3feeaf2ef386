import { describe, expect, it } from 'vitest';
import {
  type AuthorizationCodeRecord,
  type GrantRecord,
  type LoginAttemptRecord,
  type RefreshTokenRecord,
  StorageConflictError,
} from '../src/index.js';
import { createMemoryStorage } from '../src/testing.js';

const at = (iso: string) => new Date(iso);
const T0 = at('2026-01-01T10:00:00.000Z');
const later = (seconds: number) => new Date(T0.getTime() + seconds * 1000);

const grant = (overrides: Partial<GrantRecord> = {}): GrantRecord => ({
  id: 'g-1',
  userId: 'u-alice',
  clientId: 'ci',
  scope: ['openid'],
  authTime: T0,
  sessionId: 's-1',
  createdAt: T0,
  expiresAt: later(3600),
  revokedAt: null,
  ...overrides,
});

const code = (overrides: Partial<AuthorizationCodeRecord> = {}): AuthorizationCodeRecord => ({
  hash: 'code-hash',
  clientId: 'ci',
  userId: 'u-alice',
  redirectUri: 'https://app.example.com/cb',
  scope: ['openid'],
  nonce: null,
  codeChallenge: 'challenge',
  resource: null,
  codeChallengeMethod: 'S256',
  authTime: T0,
  sessionId: 's-1',
  grantId: null,
  createdAt: T0,
  expiresAt: later(60),
  consumedAt: null,
  ...overrides,
});

const token = (overrides: Partial<RefreshTokenRecord> = {}): RefreshTokenRecord => ({
  hash: 'token-hash',
  grantId: 'g-1',
  clientId: 'ci',
  userId: 'u-alice',
  scope: ['openid'],
  createdAt: T0,
  expiresAt: later(86400),
  usedAt: null,
  ...overrides,
});

const attempt = (id: string, seconds: number, overrides: Partial<LoginAttemptRecord> = {}) => ({
  id,
  username: 'alice',
  userId: 'u-alice',
  sourceAddress: '203.0.113.7',
  provider: 'password',
  success: false,
  reason: 'invalid_credentials',
  createdAt: later(seconds),
  ...overrides,
});

describe('memory storage: grants', () => {
  it('revokes live grants once, by id, session or user, returning what it revoked', async () => {
    const { grants } = createMemoryStorage();
    await grants.create(grant({ id: 'g-1' }));
    await grants.create(grant({ id: 'g-2', createdAt: later(1) }));
    await grants.create(grant({ id: 'g-3', sessionId: 's-2' }));
    await grants.create(grant({ id: 'g-4', userId: 'u-bob', sessionId: 's-3' }));
    await expect(grants.create(grant())).rejects.toBeInstanceOf(StorageConflictError);

    const revoked = await grants.revokeBySession('s-1', later(10));
    expect(revoked.map((g) => [g.id, g.revokedAt])).toEqual([
      ['g-1', later(10)],
      ['g-2', later(10)],
    ]);
    expect(await grants.revokeBySession('s-1', later(20))).toEqual([]);
    expect((await grants.revokeByUser('u-alice', later(30))).map((g) => g.id)).toEqual(['g-3']);
    expect(await grants.revoke('g-3', later(40))).toBe(false);
    expect(await grants.revoke('missing', later(40))).toBe(false);
    expect((await grants.findById('g-1'))?.revokedAt).toEqual(later(10));
    expect((await grants.findById('g-4'))?.revokedAt).toBeNull();
  });
});

describe('memory storage: authorization codes and refresh tokens', () => {
  it('redeems a code exactly once among concurrent callers; later ones see a replay', async () => {
    const { authorizationCodes } = createMemoryStorage();
    await authorizationCodes.create(code());
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => authorizationCodes.redeem('code-hash', later(i))),
    );
    expect(results.map((r) => r.status)).toEqual(['redeemed', ...Array(7).fill('replayed')]);
    await authorizationCodes.openGrant('code-hash', grant());
    expect(await authorizationCodes.redeem('code-hash', later(9))).toEqual({
      status: 'replayed',
      code: code({ consumedAt: later(0), grantId: 'g-1' }),
    });
    expect(await authorizationCodes.redeem('other', later(9))).toEqual({ status: 'unknown' });
  });

  it('rotates a refresh token exactly once; later uses are reuse', async () => {
    const { refreshTokens } = createMemoryStorage();
    await refreshTokens.create(token());
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => refreshTokens.use('token-hash', later(i))),
    );
    expect(results.filter((r) => r.status === 'rotated')).toHaveLength(1);
    expect(results.filter((r) => r.status === 'reused')).toHaveLength(7);
    expect(await refreshTokens.findByHash('token-hash')).toEqual(token({ usedAt: later(0) }));
    expect(await refreshTokens.use('other', later(9))).toEqual({ status: 'unknown' });
  });

  it('purges only what expired before now', async () => {
    const storage = createMemoryStorage();
    await storage.authorizationCodes.create(code({ hash: 'old', expiresAt: later(59) }));
    await storage.authorizationCodes.create(code({ hash: 'edge', expiresAt: later(60) }));
    await storage.refreshTokens.create(token({ hash: 'old', expiresAt: later(59) }));
    await storage.refreshTokens.create(token({ hash: 'edge', expiresAt: later(60) }));
    expect(await storage.authorizationCodes.purgeExpired(later(60))).toBe(1);
    expect(await storage.refreshTokens.purgeExpired(later(60))).toBe(1);
    expect((await storage.authorizationCodes.redeem('edge', later(60))).status).toBe('redeemed');
    expect(await storage.refreshTokens.findByHash('old')).toBeUndefined();
  });

  it('undoes a redemption inside a failed transaction', async () => {
    const storage = createMemoryStorage();
    await storage.authorizationCodes.create(code());
    await expect(
      storage.transaction(async (tx) => {
        await tx.authorizationCodes.redeem('code-hash', later(1));
        await tx.grants.create(grant());
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(await storage.grants.findById('g-1')).toBeUndefined();
    expect((await storage.authorizationCodes.redeem('code-hash', later(2))).status).toBe('redeemed');
  });
});

describe('memory storage: sessions, consents, interactions', () => {
  it('ends a session once and finds it by secret hash', async () => {
    const { sessions } = createMemoryStorage();
    const session = {
      id: 's-1',
      secretHash: 'secret-hash',
      userId: 'u-alice',
      authTime: T0,
      createdAt: T0,
      expiresAt: later(3600),
      endedAt: null,
    };
    await sessions.create(session);
    await expect(sessions.create({ ...session, id: 's-2' })).rejects.toMatchObject({ field: 'secretHash' });
    expect(await sessions.findBySecretHash('secret-hash')).toEqual(session);
    expect(await sessions.end('s-1', later(5))).toBe(true);
    expect(await sessions.end('s-1', later(6))).toBe(false);
    expect(await sessions.end('missing', later(6))).toBe(false);
    expect((await sessions.findById('s-1'))?.endedAt).toEqual(later(5));
  });

  it('replaces a consent of the same user and client', async () => {
    const { consents } = createMemoryStorage();
    await consents.save({ userId: 'u-alice', clientId: 'ci', scope: ['openid', 'email'], grantedAt: T0 });
    await consents.save({ userId: 'u-alice', clientId: 'ci', scope: ['openid'], grantedAt: later(1) });
    expect(await consents.find('u-alice', 'ci')).toEqual({
      userId: 'u-alice',
      clientId: 'ci',
      scope: ['openid'],
      grantedAt: later(1),
    });
    expect(await consents.find('u-alice', 'other')).toBeUndefined();
  });

  it('sets the user of an interaction, removes and purges interactions', async () => {
    const { interactions } = createMemoryStorage();
    const interaction = {
      id: 'i-1',
      secretHash: 'h',
      request: { scope: ['openid'], state: 'xyz' },
      userId: null,
      authTime: null,
      csrfTokenHash: 'csrf',
      createdAt: T0,
      expiresAt: later(600),
    };
    await interactions.create(interaction);
    await interactions.create({ ...interaction, id: 'i-2', expiresAt: later(599) });
    await interactions.setUser('i-1', 'u-alice', later(5));
    expect(await interactions.findById('i-1')).toEqual({
      ...interaction,
      userId: 'u-alice',
      authTime: later(5),
    });
    expect(await interactions.purgeExpired(later(600))).toBe(1);
    expect(await interactions.remove('i-1')).toBe(true);
    expect(await interactions.remove('i-1')).toBe(false);
    expect(await interactions.remove('i-2')).toBe(false);
  });
});

describe('memory storage: login attempts', () => {
  it('counts failures since `since`, after the latest success, regardless of case', async () => {
    const { loginAttempts } = createMemoryStorage();
    for (const a of [attempt('a-1', 1), attempt('a-2', 2, { username: 'ALICE' }), attempt('a-3', 3)]) {
      await loginAttempts.record(a);
    }
    expect(await loginAttempts.failuresForUsername('Alice', T0)).toEqual({ count: 3, latest: later(3) });
    expect(await loginAttempts.failuresForUsername('alice', later(2))).toEqual({
      count: 2,
      latest: later(3),
    });
    await loginAttempts.record(attempt('a-4', 4, { success: true, reason: null }));
    expect(await loginAttempts.failuresForUsername('alice', T0)).toEqual({ count: 0, latest: null });
    await loginAttempts.record(attempt('a-5', 5));
    expect(await loginAttempts.failuresForUsername('alice', T0)).toEqual({ count: 1, latest: later(5) });
    await loginAttempts.record(attempt('b-1', 6, { username: 'bob' }));
    expect(await loginAttempts.failuresFromAddress('203.0.113.7', T0)).toEqual({
      count: 5,
      latest: later(6),
    });
    expect(await loginAttempts.failuresFromAddress('203.0.113.7', later(6))).toEqual({
      count: 1,
      latest: later(6),
    });
  });

  it('lists attempts for a username newest first, lower-cased, up to the limit', async () => {
    const { loginAttempts } = createMemoryStorage();
    await loginAttempts.record(attempt('a-1', 1, { username: 'Alice' }));
    await loginAttempts.record(attempt('a-3', 2));
    await loginAttempts.record(attempt('a-2', 2));
    await loginAttempts.record(attempt('b-1', 3, { username: 'bob' }));
    const listed = await loginAttempts.listByUsername('ALICE', 10);
    expect(listed.map((a) => a.id)).toEqual(['a-3', 'a-2', 'a-1']);
    expect(listed[2]?.username).toBe('alice');
    expect((await loginAttempts.listByUsername('alice', 1)).map((a) => a.id)).toEqual(['a-3']);
  });
});
