import { describe, expect, it } from 'vitest';
import { giveConsent } from '../../src/authorize/consent.js';
import type { ExternalIdentity } from '../../src/connectors/types.js';
import { endBrowserSession } from '../../src/sessions/end-session.js';
import {
  type IdentityMappingPolicy,
  mapExternalIdentity,
  normalizeUsername,
  providerGroups,
  upstreamAmr,
  upstreamGroups,
} from '../../src/sign-in/external.js';
import { createMemoryStorage } from '../../src/testing.js';
import { manualClock } from '../helpers.js';

const identity = (overrides: Partial<ExternalIdentity> = {}): ExternalIdentity => ({
  subject: 'u-100',
  username: 'Alice Smith',
  email: 'alice@example.test',
  emailVerified: true,
  displayName: 'Alice Smith',
  groups: ['engineering', 'system:masters'],
  ...overrides,
});

const policy = (overrides: Partial<IdentityMappingPolicy> = {}): IdentityMappingPolicy => ({
  provider: 'corp',
  mapping: 'auto',
  linkByVerifiedEmail: false,
  groupsPrefix: 'corp:',
  ...overrides,
});

async function user(
  storage: ReturnType<typeof createMemoryStorage>,
  id: string,
  username: string,
  email: string,
) {
  return storage.users.create({
    id,
    username,
    email,
    displayName: null,
    groups: [],
    passwordHash: null,
    createdAt: new Date('2026-01-01T00:00:00Z'),
  });
}

describe('mapping an external identity to a local user', () => {
  it('auto: creates a user on first sign-in and signs the same user in afterwards', async () => {
    const storage = createMemoryStorage();
    const context = { storage, clock: manualClock() };
    const first = await mapExternalIdentity(identity(), policy(), context);
    expect(first).toMatchObject({ ok: true, created: true, user: { username: 'alice-smith' } });
    const again = await mapExternalIdentity(identity({ groups: ['platform'] }), policy(), context);
    expect(again).toMatchObject({ ok: true, created: false });
    expect(first.ok && again.ok && again.user.id).toBe(first.ok && first.user.id);
    expect(await storage.identities.find('corp', 'u-100')).toMatchObject({ groups: ['corp:platform'] });
  });

  it('auto: gives a taken username a suffix that is the same for the same identity', async () => {
    const storage = createMemoryStorage();
    await user(storage, 'u-other', 'alice-smith', 'other@example.test');
    const mapped = await mapExternalIdentity(identity(), policy(), { storage, clock: manualClock() });
    expect(mapped.ok && mapped.user.username).toMatch(/^alice-smith-[0-9a-f]{6}$/);
    const elsewhere = createMemoryStorage();
    await user(elsewhere, 'u-other', 'alice-smith', 'other@example.test');
    const twin = await mapExternalIdentity(identity(), policy(), {
      storage: elsewhere,
      clock: manualClock(),
    });
    expect(twin.ok && twin.user.username).toBe(mapped.ok && mapped.user.username);
  });

  it('links by verified email to the one user with that address, in any case', async () => {
    const storage = createMemoryStorage();
    await user(storage, 'u-alice', 'alice', 'Alice@Example.TEST');
    const mapped = await mapExternalIdentity(
      identity(),
      policy({ mapping: 'lookup', linkByVerifiedEmail: true }),
      {
        storage,
        clock: manualClock(),
      },
    );
    expect(mapped).toMatchObject({ ok: true, created: false, user: { id: 'u-alice' } });
  });

  it('links nobody when several users share the email, or when the email is not verified', async () => {
    const storage = createMemoryStorage();
    await user(storage, 'u-1', 'alice', 'alice@example.test');
    await user(storage, 'u-2', 'alice2', 'alice@example.test');
    const lookup = policy({ mapping: 'lookup', linkByVerifiedEmail: true });
    const context = { storage, clock: manualClock() };
    expect(await mapExternalIdentity(identity(), lookup, context)).toEqual({
      ok: false,
      reason: 'not_linked',
    });
    const single = createMemoryStorage();
    await user(single, 'u-1', 'alice', 'alice@example.test');
    expect(
      await mapExternalIdentity(identity({ emailVerified: false }), lookup, {
        storage: single,
        clock: manualClock(),
      }),
    ).toEqual({ ok: false, reason: 'not_linked' });
  });

  it('manual: signs in only identities an administrator linked; a disabled user is refused', async () => {
    const storage = createMemoryStorage();
    const context = { storage, clock: manualClock() };
    expect(await mapExternalIdentity(identity(), policy({ mapping: 'manual' }), context)).toEqual({
      ok: false,
      reason: 'not_linked',
    });
    await user(storage, 'u-alice', 'alice', 'alice@example.test');
    await storage.identities.link({
      provider: 'corp',
      subject: 'u-100',
      userId: 'u-alice',
      username: 'alice',
      email: null,
      groups: [],
      linkedAt: new Date(context.clock.now()),
      lastLoginAt: null,
    });
    expect(await mapExternalIdentity(identity(), policy({ mapping: 'manual' }), context)).toMatchObject({
      ok: true,
    });
    await storage.users.update('u-alice', { disabled: true, updatedAt: new Date(context.clock.now()) });
    expect(await mapExternalIdentity(identity(), policy({ mapping: 'manual' }), context)).toEqual({
      ok: false,
      reason: 'disabled',
      userId: 'u-alice',
    });
  });

  it('prefixes upstream groups and never lets an upstream claim a system: group', () => {
    expect(providerGroups(['dev', 'dev', 'a b'], 'corp:')).toEqual(['corp:dev']);
    expect(providerGroups(['masters'], 'system:')).toEqual([]);
    // At most 200 kept, the first in byte order; the rest, and invalid names, are counted.
    const many = Array.from({ length: 250 }, (_, i) => `team-${String(i).padStart(3, '0')}`);
    const bounded = upstreamGroups([...many, 'system:masters', 'x'.repeat(300)], '');
    expect(bounded.groups).toEqual(many.slice(0, 200));
    expect(bounded.dropped).toBe(52);
    expect(normalizeUsername('  ..Bob (Ops)')).toBe('bob-ops-');
    expect(normalizeUsername('!!!')).toBe('user');
  });
});

describe('consent and sign-out', () => {
  it('adds a new consent (scopes and resources) to what the user consented to before', async () => {
    const storage = createMemoryStorage();
    const clock = manualClock();
    await giveConsent(
      'u-1',
      'portal',
      { scope: ['openid', 'email'], resources: ['kubernetes:prod'] },
      { consents: storage.consents, clock },
    );
    await giveConsent(
      'u-1',
      'portal',
      { scope: ['openid', 'groups'] },
      { consents: storage.consents, clock },
    );
    await giveConsent(
      'u-1',
      'portal',
      { scope: ['openid'], resources: ['kubernetes:stage', 'kubernetes:prod'] },
      { consents: storage.consents, clock },
    );
    const consent = await storage.consents.find('u-1', 'portal');
    expect(consent?.scope).toEqual(['openid', 'email', 'groups']);
    expect(consent?.resources).toEqual(['kubernetes:prod', 'kubernetes:stage']);
  });

  it('ends a browser session and revokes the grants asked for (one client’s, all, none) for every replica', async () => {
    const storage = createMemoryStorage();
    const clock = manualClock();
    const now = new Date(clock.now());
    await storage.sessions.create({
      id: 's-1',
      secretHash: 'h',
      userId: 'u-1',
      authTime: now,
      createdAt: now,
      expiresAt: new Date(clock.now() + 3_600_000),
      endedAt: null,
    });
    await storage.grants.create({
      id: 'g-1',
      userId: 'u-1',
      clientId: 'portal',
      scope: ['openid'],
      authTime: now,
      sessionId: 's-1',
      createdAt: now,
      expiresAt: new Date(clock.now() + 3_600_000),
      revokedAt: null,
    });
    await storage.grants.create({
      id: 'g-2',
      userId: 'u-1',
      clientId: 'kubectl',
      scope: ['openid'],
      authTime: now,
      sessionId: 's-1',
      createdAt: now,
      expiresAt: new Date(clock.now() + 3_600_000),
      revokedAt: null,
    });
    const context = { storage, clock, maxTokenLifetimeSeconds: 600 };
    // Signing out of an application that is not named revokes nothing; of the portal, its grant only.
    expect(await endBrowserSession('s-1', { revokeGrants: 'client' }, context)).toBe(0);
    expect(await endBrowserSession('s-1', { revokeGrants: 'none', clientId: 'portal' }, context)).toBe(0);
    expect(await endBrowserSession('s-1', { revokeGrants: 'client', clientId: 'portal' }, context)).toBe(1);
    expect((await storage.sessions.findById('s-1'))?.endedAt).not.toBeNull();
    expect(await storage.revocations.isRevoked('sid', 'g-1', now)).toBe(true);
    expect(await storage.revocations.isRevoked('sid', 'g-2', now)).toBe(false);
    // A global logout takes the rest.
    expect(await endBrowserSession('s-1', { revokeGrants: 'all' }, context)).toBe(1);
    expect(await storage.revocations.isRevoked('sid', 'g-2', now)).toBe(true);
  });
});

describe('upstreamAmr', () => {
  const said = (amr: string[], acr: string | null = null) => ({ upstreamAuthentication: { amr, acr } });

  it('is MFA when a trusted value is in the amr or is the acr', () => {
    expect(upstreamAmr(said(['pwd', 'mfa']), ['mfa'])).toEqual(['fed', 'mfa']);
    expect(upstreamAmr(said(['hwk']), ['mfa', 'hwk'])).toEqual(['fed', 'mfa']);
    expect(upstreamAmr(said(['pwd'], 'urn:corp:acr:strong'), ['urn:corp:acr:strong'])).toEqual([
      'fed',
      'mfa',
    ]);
  });

  it('is null when nothing is trusted, nothing matches, or no ID token said anything', () => {
    expect(upstreamAmr(said(['mfa']), [])).toBeNull();
    expect(upstreamAmr(said(['mfa']), undefined)).toBeNull();
    expect(upstreamAmr(said(['pwd'], 'urn:corp:acr:weak'), ['mfa', 'urn:corp:acr:strong'])).toBeNull();
    expect(upstreamAmr(said(['pwd'], 'mfa'), ['hwk'])).toBeNull();
    expect(upstreamAmr({}, ['mfa'])).toBeNull();
  });
});
