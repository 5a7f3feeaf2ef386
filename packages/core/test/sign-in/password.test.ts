import { describe, expect, it } from 'vitest';
import { OAuthProtocolError } from '../../src/errors.js';
import type { ExternalPasswordCheck } from '../../src/grants/context.js';
import { DEFAULT_LOGIN_THROTTLE, LoginThrottle } from '../../src/security/login-throttle.js';
import { type PasswordSignInContext, signInWithPassword } from '../../src/sign-in/password.js';
import { manualClock, seededStorage } from '../helpers.js';

async function setup(external?: ExternalPasswordCheck) {
  const { storage, hasher } = await seededStorage();
  const clock = manualClock();
  const context: PasswordSignInContext = {
    passwords: {
      findUserByUsername: (name) => storage.users.findByUsername(name),
      hasher,
      dummyHash: await hasher.hash('dummy'),
    },
    externalPasswords: async (name) => (name === 'corp' ? external : undefined),
    throttle: new LoginThrottle(storage.loginAttempts, DEFAULT_LOGIN_THROTTLE, clock),
  };
  const attempts = () => storage.loginAttempts.listByUsername('alice', 50);
  return { storage, context, clock, attempts };
}

const request = (
  password: string,
  extra: { provider?: string; address?: string; clientId?: string } = {},
) => ({
  username: 'alice',
  password,
  provider: extra.provider,
  sourceAddress: extra.address ?? '203.0.113.7',
  clientId: extra.clientId,
});

describe('password sign-in', () => {
  it('signs a local user in with the right password and records the success', async () => {
    const { context, attempts } = await setup();
    const result = await signInWithPassword(request('correct horse'), context);
    expect(result).toMatchObject({ ok: true, user: { id: 'u-alice' } });
    expect(await attempts()).toMatchObject([{ success: true, provider: 'password', userId: 'u-alice' }]);
  });

  it('refuses a wrong password and counts it toward the lock', async () => {
    const { context, attempts } = await setup();
    expect(await signInWithPassword(request('wrong'), context)).toEqual({
      ok: false,
      failure: 'invalid_credentials',
    });
    expect(await attempts()).toMatchObject([{ success: false, reason: 'invalid_credentials' }]);
  });

  it('locks the account after the policy’s failures, before checking even the right password', async () => {
    const { context, attempts, clock } = await setup();
    for (let i = 0; i < DEFAULT_LOGIN_THROTTLE.maxFailures; i++) {
      await signInWithPassword(request('wrong'), context);
      clock.advance(1);
    }
    const locked = await signInWithPassword(request('correct horse'), context);
    expect(locked).toMatchObject({ ok: false, failure: 'locked' });
    expect(locked.ok === false && locked.failure === 'locked' && locked.retryAfterSeconds).toBeGreaterThan(0);
    expect((await attempts())[0]).toMatchObject({ success: false, reason: 'locked' });
  });

  it('counts the login page and the password grant apart per address', async () => {
    const { context, storage } = await setup();
    for (let i = 0; i < DEFAULT_LOGIN_THROTTLE.maxFailuresPerAddress; i++) {
      await storage.loginAttempts.record({
        id: `a-${i}`,
        username: `someone-${i}`,
        userId: null,
        sourceAddress: '198.51.100.1',
        provider: 'password',
        success: false,
        reason: 'invalid_credentials',
        createdAt: new Date(manualClock().now()),
      });
    }
    const fromBrowser = await signInWithPassword(
      request('correct horse', { address: '198.51.100.1' }),
      context,
    );
    expect(fromBrowser).toMatchObject({ ok: false, failure: 'locked' });
    const fromServer = await signInWithPassword(
      request('correct horse', { address: '198.51.100.1', clientId: 'cli' }),
      context,
    );
    expect(fromServer).toMatchObject({ ok: true });
  });

  it('blocks an address through the password grant after its own allowance, the browser still free', async () => {
    const { context, storage } = await setup();
    for (let i = 0; i < DEFAULT_LOGIN_THROTTLE.maxFailuresPerAddress; i++) {
      await storage.loginAttempts.record({
        id: `g-${i}`,
        username: `someone-${i}`,
        userId: null,
        sourceAddress: '198.51.100.2',
        provider: 'password',
        success: false,
        reason: 'invalid_credentials',
        createdAt: new Date(manualClock().now()),
        clientId: `client-${i % 3}`,
      });
    }
    expect(
      await signInWithPassword(
        request('correct horse', { address: '198.51.100.2', clientId: 'cli' }),
        context,
      ),
    ).toMatchObject({ ok: false, failure: 'locked', scope: 'address' });
    expect(
      await signInWithPassword(request('correct horse', { address: '198.51.100.2' }), context),
    ).toMatchObject({
      ok: true,
    });
  });

  it('blocks a client whose password grant fails too often, from any address', async () => {
    const { storage, hasher } = await seededStorage();
    const clock = manualClock();
    const context: PasswordSignInContext = {
      passwords: {
        findUserByUsername: (n) => storage.users.findByUsername(n),
        hasher,
        dummyHash: await hasher.hash('d'),
      },
      throttle: new LoginThrottle(
        storage.loginAttempts,
        { ...DEFAULT_LOGIN_THROTTLE, maxFailuresPerClient: 3 },
        clock,
      ),
    };
    for (const address of ['192.0.2.1', '192.0.2.2', '192.0.2.3']) {
      await signInWithPassword(
        { ...request('wrong', { address, clientId: 'cli' }), username: `u-${address}` },
        context,
      );
    }
    expect(
      await signInWithPassword(request('correct horse', { address: '192.0.2.4', clientId: 'cli' }), context),
    ).toMatchObject({ ok: false, failure: 'locked', scope: 'client' });
    expect(
      await signInWithPassword(
        request('correct horse', { address: '192.0.2.4', clientId: 'other' }),
        context,
      ),
    ).toMatchObject({ ok: true });
  });

  it('keys the lock by provider and username: a locked local bob leaves the directory’s bob alone', async () => {
    const { context, storage, clock } = await setup(async (_username, password) => {
      const user = await storage.users.findById('u-alice');
      return password === 'ldap secret' && user !== undefined
        ? { ok: true, user }
        : { ok: false, failure: 'invalid_credentials' };
    });
    for (let i = 0; i < DEFAULT_LOGIN_THROTTLE.maxFailures; i++) {
      await signInWithPassword(request('wrong'), context);
      clock.advance(1);
    }
    expect(await signInWithPassword(request('correct horse'), context)).toMatchObject({ failure: 'locked' });
    expect(await signInWithPassword(request('ldap secret', { provider: 'corp' }), context)).toMatchObject({
      ok: true,
    });
  });

  it('smart lockout: an attacker elsewhere cannot lock the owner out of an address they signed in from', async () => {
    const { context, clock } = await setup();
    const home = '198.51.100.10';
    expect(await signInWithPassword(request('correct horse', { address: home }), context)).toMatchObject({
      ok: true,
    });
    clock.advance(1);
    for (let i = 0; i < DEFAULT_LOGIN_THROTTLE.maxFailures; i++) {
      await signInWithPassword(request('guess', { address: `203.0.113.${i + 1}` }), context);
      clock.advance(1);
    }
    // Locked for strangers, even with the right password…
    expect(
      await signInWithPassword(request('correct horse', { address: '203.0.113.99' }), context),
    ).toMatchObject({
      ok: false,
      failure: 'locked',
      scope: 'account',
    });
    // …not for the owner at home.
    expect(await signInWithPassword(request('correct horse', { address: home }), context)).toMatchObject({
      ok: true,
    });
    clock.advance(1);
    // Failures at home count toward home's own lock.
    for (let i = 0; i < DEFAULT_LOGIN_THROTTLE.maxFailures; i++) {
      await signInWithPassword(request('typo', { address: home }), context);
      clock.advance(1);
    }
    expect(await signInWithPassword(request('correct horse', { address: home }), context)).toMatchObject({
      failure: 'locked',
    });
  });

  it('checks the password at a named provider, recorded under its name', async () => {
    const { context, storage, attempts } = await setup(async (_username, password) => {
      const user = await storage.users.findById('u-alice');
      return password === 'ldap secret' && user !== undefined
        ? { ok: true, user }
        : { ok: false, failure: 'invalid_credentials' };
    });
    expect(await signInWithPassword(request('ldap secret', { provider: 'CORP' }), context)).toMatchObject({
      ok: true,
    });
    expect(await attempts()).toMatchObject([{ success: true, provider: 'corp' }]);
  });

  it('answers unknown_provider for a provider that does not exist, and records nothing', async () => {
    const { context, attempts } = await setup();
    expect(await signInWithPassword(request('x', { provider: 'nowhere' }), context)).toEqual({
      ok: false,
      failure: 'unknown_provider',
    });
    expect(await attempts()).toEqual([]);
  });

  it('lets an unreachable provider fail loudly, not as a wrong password', async () => {
    const { context, attempts } = await setup(async () => {
      throw new OAuthProtocolError('temporarily_unavailable', 'the directory did not answer');
    });
    await expect(signInWithPassword(request('x', { provider: 'corp' }), context)).rejects.toMatchObject({
      code: 'temporarily_unavailable',
    });
    expect(await attempts()).toEqual([]);
  });
});
