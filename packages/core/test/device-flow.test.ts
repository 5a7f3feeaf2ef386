import { DEVICE_CODE_GRANT_TYPE } from '@idgate/schema';
import { decodeJwt } from 'jose';
import { describe, expect, it } from 'vitest';
import {
  approveDeviceAuthorization,
  type DeviceApprovalContext,
  denyDeviceAuthorization,
  enterUserCode,
} from '../src/device/approval.js';
import { startDeviceAuthorization } from '../src/device/authorization.js';
import { formatUserCode, generateUserCode, normalizeUserCode } from '../src/device/user-code.js';
import { OAuthProtocolError } from '../src/errors.js';
import type { TokenEndpointContext } from '../src/grants/context.js';
import { handleTokenRequest } from '../src/grants/token-endpoint.js';
import type { ClientRecord, UserRecord } from '../src/model.js';
import { hashSecret } from '../src/secrets.js';
import { DEFAULT_LOGIN_THROTTLE, LoginThrottle } from '../src/security/login-throttle.js';
import { client, ISSUER, keyRing, manualClock, seededStorage } from './helpers.js';

const VERIFICATION_URI = `${ISSUER}/device`;
const DEVICE_CLIENT = client({
  clientId: 'kubectl',
  name: 'kubectl',
  public: true,
  trusted: false,
  grantTypes: [DEVICE_CODE_GRANT_TYPE, 'refresh_token'],
  scopes: ['openid', 'groups', 'offline_access'],
  audiences: ['cluster-a', 'cluster-b'],
});

async function setup(overrides: Partial<ClientRecord> = {}, clusterAudiences?: string[]) {
  const clock = manualClock();
  const ring = await keyRing('RS256', clock);
  const { storage, hasher } = await seededStorage();
  await storage.clients.create({ ...DEVICE_CLIENT, ...overrides });
  await storage.clients.create(
    client({ clientId: 'other', public: true, grantTypes: [DEVICE_CODE_GRANT_TYPE] }),
  );
  const findClient = (id: string) => storage.clients.findById(id);
  const tokens: TokenEndpointContext = {
    issuer: ISSUER,
    keys: ring,
    clock,
    findClient,
    passwords: {
      findUserByUsername: (u) => storage.users.findByUsername(u),
      hasher,
      dummyHash: await hasher.hash('dummy'),
    },
    storage,
    lifetimes: { idToken: 3600, grant: 86_400 * 90, maxAccessToken: 3600 },
    newGrantId: () => 'grant-1',
    ...(clusterAudiences === undefined ? {} : { clusterAudiences: async () => clusterAudiences }),
  };
  const approval: DeviceApprovalContext = {
    clock,
    findClient,
    storage,
    throttle: new LoginThrottle(
      storage.loginAttempts,
      { ...DEFAULT_LOGIN_THROTTLE, maxFailuresPerAddress: 3 },
      clock,
    ),
  };
  const start = (form: Record<string, string | string[]> = {}) =>
    startDeviceAuthorization({ client_id: 'kubectl', ...form }, undefined, {
      clock,
      findClient,
      storage,
      verificationUri: VERIFICATION_URI,
    });
  const poll = (deviceCode: string, clientId = 'kubectl', extra: Record<string, string> = {}) =>
    handleTokenRequest(
      { grant_type: DEVICE_CODE_GRANT_TYPE, device_code: deviceCode, client_id: clientId, ...extra },
      undefined,
      tokens,
    );
  const alice = (await storage.users.findById('u-alice')) as UserRecord;
  const approver = { user: alice, authTime: new Date(clock.now()), sessionId: 'session-1' };
  return { clock, storage, start, poll, approval, approver, tokens };
}

async function refusal(promise: Promise<unknown>): Promise<OAuthProtocolError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(OAuthProtocolError);
  return error as OAuthProtocolError;
}

describe('RFC 8628 §6.1 user codes', () => {
  it('are 8 consonants of the 20-letter alphabet, shown as XXXX-XXXX', () => {
    const codes = Array.from({ length: 200 }, generateUserCode);
    for (const code of codes) expect(code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{8}$/);
    expect(new Set(codes).size).toBe(200);
    expect(formatUserCode('BCDFGHJK')).toBe('BCDF-GHJK');
  });

  it('are entered without regard to case, dashes or spaces', () => {
    expect(normalizeUserCode('bcdf-ghjk')).toBe('BCDFGHJK');
    expect(normalizeUserCode(' Bcdf ghjK ')).toBe('BCDFGHJK');
    expect(normalizeUserCode('BCDF-GHJA')).toBeUndefined();
    expect(normalizeUserCode('BCDF-GHJ')).toBeUndefined();
  });
});

describe('RFC 8628 §3.1 device authorization request', () => {
  it('answers a device code, a user code, the verification URIs, the lifetime and the interval', async () => {
    const { start, storage } = await setup();
    const response = await start({ scope: 'openid groups' });
    expect(response).toEqual({
      device_code: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      user_code: expect.stringMatching(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/),
      verification_uri: VERIFICATION_URI,
      verification_uri_complete: `${VERIFICATION_URI}?user_code=${response.user_code}`,
      expires_in: 600,
      interval: 5,
    });
    const stored = await storage.deviceAuthorizations.findByDeviceCodeHash(
      await hashSecret(response.device_code),
    );
    // It asked for no resource: what the page will name and the grant cover is fixed now, every
    // audience the client has.
    expect(stored).toMatchObject({
      clientId: 'kubectl',
      scope: ['openid', 'groups'],
      status: 'pending',
      resource: ['cluster-a', 'cluster-b'],
    });
    expect(stored?.userCode).toBe(response.user_code.replace('-', ''));
  });

  it('refuses a client without the device_code grant, a scope or a resource it may not have', async () => {
    const { start } = await setup({ grantTypes: ['refresh_token'] });
    expect((await refusal(start())).code).toBe('unauthorized_client');
    const ok = await setup();
    expect((await refusal(ok.start({ scope: 'openid admin' }))).code).toBe('invalid_scope');
    expect((await refusal(ok.start({ resource: 'cluster-z' }))).code).toBe('invalid_target');
    expect((await refusal(ok.start({ client_id: 'nobody' }))).code).toBe('invalid_client');
  });
});

describe('RFC 8628 §3.4–3.5 device access token request', () => {
  it('is pending, then slow_down when polled too soon, then issues tokens once approved', async () => {
    const { start, poll, clock, approval, approver, storage } = await setup();
    const { device_code, user_code } = await start({
      scope: 'openid groups offline_access',
      resource: 'cluster-a',
    });
    expect((await refusal(poll(device_code))).code).toBe('authorization_pending');
    clock.advance(2);
    const slow = await refusal(poll(device_code));
    expect(slow.code).toBe('slow_down');
    expect(slow.status).toBe(400);
    const hash = await hashSecret(device_code);
    expect((await storage.deviceAuthorizations.findByDeviceCodeHash(hash))?.interval).toBe(10);
    clock.advance(6); // 6 s later: within the new 10 s interval
    expect((await refusal(poll(device_code))).code).toBe('slow_down');
    clock.advance(16);
    expect((await refusal(poll(device_code))).code).toBe('authorization_pending');

    const found = await enterUserCode(user_code.toLowerCase(), '203.0.113.7', approval);
    expect(found).toMatchObject({
      ok: true,
      client: { name: 'kubectl' },
      request: { resource: ['cluster-a'] },
    });
    expect(await approveDeviceAuthorization(hash, approver, approval)).toEqual({ ok: true });
    clock.advance(1); // approved: no need to wait for the interval
    const tokens = await poll(device_code);
    expect(tokens.scope).toBe('openid groups offline_access');
    expect(tokens.refresh_token).toBeDefined();
    expect(tokens.id_token).toBeDefined();
    expect(decodeJwt(tokens.access_token)).toMatchObject({
      sub: 'u-alice',
      aud: 'cluster-a',
      sid: 'grant-1',
    });
    expect(await storage.grants.findById('grant-1')).toMatchObject({
      sessionId: 'session-1',
      userId: 'u-alice',
    });

    // Single use.
    expect((await refusal(poll(device_code))).toJSON()).toEqual({
      error: 'invalid_grant',
      error_description: 'the device code was already used',
    });
    expect(await approveDeviceAuthorization(hash, approver, approval)).toEqual({
      ok: false,
      failure: 'decided',
    });
  });

  it('gives a token for a registered cluster the claims Kubernetes maps; the grant covers what was approved', async () => {
    const {
      start,
      poll,
      approval,
      approver,
      tokens: context,
      storage,
    } = await setup({}, ['cluster-a', 'cluster-b']);
    let grants = 0;
    context.newGrantId = () => `grant-${++grants}`;
    const refresh = (refreshToken: string, resource?: string) =>
      handleTokenRequest(
        {
          grant_type: 'refresh_token',
          refresh_token: refreshToken,
          client_id: 'kubectl',
          ...(resource === undefined ? {} : { resource }),
        },
        undefined,
        context,
      );
    const { device_code } = await start({ scope: 'openid groups offline_access', resource: 'cluster-a' });
    await approveDeviceAuthorization(await hashSecret(device_code), approver, approval);
    const tokens = await poll(device_code);
    expect(decodeJwt(tokens.access_token)).toMatchObject({
      aud: 'cluster-a',
      preferred_username: 'Alice',
      groups: ['dev', 'ops'],
    });
    expect((await storage.grants.findById('grant-1'))?.resources).toEqual(['cluster-a']);
    // RFC 8707 §2.2: a refresh narrows, never widens: cluster-b was never approved, and the
    // refused refresh leaves the refresh token usable.
    const widened = await refusal(refresh(tokens.refresh_token as string, 'cluster-b'));
    expect([widened.code, widened.description]).toEqual([
      'invalid_target',
      'resource not approved for this grant: cluster-b (it covers cluster-a); sign in again to ask for it',
    ]);
    const again = await refresh(tokens.refresh_token as string);
    expect(decodeJwt(again.access_token).aud).toBe('cluster-a');

    // Approved for both at sign-in: a token for one, then a refresh for the other.
    const both = await start({ scope: 'openid groups offline_access', resource: ['cluster-a', 'cluster-b'] });
    await approveDeviceAuthorization(await hashSecret(both.device_code), approver, approval);
    const forA = await poll(both.device_code, 'kubectl', { resource: 'cluster-a' });
    expect(decodeJwt(forA.access_token).aud).toBe('cluster-a');
    const forB = await refresh(forA.refresh_token as string, 'cluster-b');
    expect(decodeJwt(forB.access_token)).toMatchObject({ aud: 'cluster-b', preferred_username: 'Alice' });
    expect(decodeJwt((await refresh(forB.refresh_token as string)).access_token).aud).toEqual([
      'cluster-a',
      'cluster-b',
    ]);
  });

  it("opens the grant with the approver's upstream identity, as the browser session recorded it", async () => {
    const { start, poll, approval, approver, storage } = await setup();
    const { device_code } = await start({ scope: 'openid offline_access' });
    const hash = await hashSecret(device_code);
    const upstream = {
      provider: 'corp',
      subject: 'u-1',
      validatedAt: new Date(1000),
      checkedAt: new Date(1000),
      sealedState: 'v1.a.b',
    };
    await approveDeviceAuthorization(hash, { ...approver, upstream }, approval);
    expect((await storage.deviceAuthorizations.findByDeviceCodeHash(hash))?.upstream).toStrictEqual(upstream);
    await poll(device_code);
    expect((await storage.grants.findById('grant-1'))?.upstream).toStrictEqual(upstream);
  });

  it('opens the grant of a local sign-in with no upstream identity', async () => {
    const { start, poll, approval, approver, storage } = await setup();
    const { device_code } = await start({ scope: 'openid offline_access' });
    await approveDeviceAuthorization(await hashSecret(device_code), approver, approval);
    await poll(device_code);
    expect((await storage.grants.findById('grant-1'))?.upstream ?? null).toBeNull();
  });

  it('gives no refresh token without offline_access', async () => {
    const { start, poll, approval, approver } = await setup();
    const { device_code } = await start({ scope: 'openid' });
    await approveDeviceAuthorization(await hashSecret(device_code), approver, approval);
    const tokens = await poll(device_code);
    expect(tokens.refresh_token).toBeUndefined();
    expect(decodeJwt(tokens.access_token).aud).toEqual(['cluster-a', 'cluster-b']);
  });

  it('answers access_denied after a denial', async () => {
    const { start, poll, approval, approver } = await setup();
    const { device_code } = await start();
    const hash = await hashSecret(device_code);
    expect(await denyDeviceAuthorization(hash, approver, approval)).toEqual({ ok: true });
    const denied = await refusal(poll(device_code));
    expect([denied.code, denied.status]).toEqual(['access_denied', 400]);
    expect(await approveDeviceAuthorization(hash, approver, approval)).toEqual({
      ok: false,
      failure: 'decided',
    });
  });

  it('answers expired_token once the lifetime is over, and the page no longer finds the code', async () => {
    const { start, poll, clock, approval, approver } = await setup();
    const { device_code, user_code } = await start();
    clock.advance(600);
    expect((await refusal(poll(device_code))).code).toBe('expired_token');
    expect(await enterUserCode(user_code, '203.0.113.7', approval)).toEqual({
      ok: false,
      failure: 'unknown',
    });
    const hash = await hashSecret(device_code);
    expect(await approveDeviceAuthorization(hash, approver, approval)).toEqual({
      ok: false,
      failure: 'unknown',
    });
  });

  it("refuses an unknown code and another client's code with invalid_grant", async () => {
    const { start, poll } = await setup();
    const { device_code } = await start();
    expect((await refusal(poll('not-a-code'))).code).toBe('invalid_grant');
    expect((await refusal(poll(device_code, 'other'))).code).toBe('invalid_grant');
    expect((await refusal(poll(device_code))).code).toBe('authorization_pending');
  });

  it('refuses a resource at the token request that the device authorization did not ask for', async () => {
    const { start, poll, approval, approver } = await setup();
    const { device_code } = await start({ resource: 'cluster-a' });
    await approveDeviceAuthorization(await hashSecret(device_code), approver, approval);
    expect((await refusal(poll(device_code, 'kubectl', { resource: 'cluster-b' }))).code).toBe(
      'invalid_target',
    );
    const tokens = await poll(device_code, 'kubectl', { resource: 'cluster-a' });
    expect(decodeJwt(tokens.access_token).aud).toBe('cluster-a');
  });

  it('lets exactly one of two concurrent polls after approval have the tokens', async () => {
    const { start, poll, approval, approver } = await setup();
    const { device_code } = await start();
    await approveDeviceAuthorization(await hashSecret(device_code), approver, approval);
    const results = await Promise.allSettled([poll(device_code), poll(device_code)]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
  });
});

describe('RFC 8628 §5.1 wrong user codes', () => {
  it('are counted per address, which is then refused for the window', async () => {
    const { start, approval, clock } = await setup();
    const { user_code } = await start();
    for (const guess of ['BCDF-GHJK', 'nonsense', 'ZZZZ-ZZZZ']) {
      expect(await enterUserCode(guess, '203.0.113.7', approval)).toEqual({ ok: false, failure: 'unknown' });
    }
    expect(await enterUserCode(user_code, '203.0.113.7', approval)).toEqual({
      ok: false,
      failure: 'locked',
      scope: 'address',
      retryAfterSeconds: 900,
    });
    expect((await enterUserCode(user_code, '198.51.100.1', approval)).ok).toBe(true);
    clock.advance(900);
    const fresh = await start();
    expect((await enterUserCode(fresh.user_code, '203.0.113.7', approval)).ok).toBe(true);
  });

  it('are counted across addresses too: past the budget of all together, no code is read for the window', async () => {
    const { start, approval, clock, storage } = await setup();
    approval.throttle = new LoginThrottle(
      storage.loginAttempts,
      { ...DEFAULT_LOGIN_THROTTLE, maxFailuresPerAddress: 3, maxWrongUserCodes: 5 },
      clock,
    );
    const { user_code } = await start();
    // Five addresses, each under its own budget of three.
    for (let i = 1; i <= 5; i++) {
      clock.advance(60);
      expect(await enterUserCode('ZZZZ-ZZZZ', `203.0.113.${i}`, approval)).toEqual({
        ok: false,
        failure: 'unknown',
      });
    }
    const locked = { ok: false, failure: 'locked', scope: 'all', retryAfterSeconds: 900 };
    expect(await enterUserCode(user_code, '198.51.100.1', approval, 'Firefox')).toEqual(locked);
    // Refused codes count toward their address, not toward everyone's: the lock ends a window
    // after the last wrong code that was read, however much the page is hammered meanwhile.
    clock.advance(600);
    for (let i = 0; i < 3; i++) await enterUserCode('ZZZZ-ZZZZ', '198.51.100.2', approval);
    expect(await enterUserCode(user_code, '198.51.100.1', approval)).toEqual({
      ...locked,
      retryAfterSeconds: 300,
    });
    const events = await storage.auditEvents.list({ limit: 10, types: ['device.locked'] });
    // Events of one instant are listed by id, not as made: compared as a set.
    const rows = events.map((e) => JSON.stringify([e.address, e.userAgent, e.outcome, e.details]));
    expect(rows.sort()).toEqual(
      [
        ['198.51.100.1', 'Firefox', 'failure', { scope: 'all', retryAfterSeconds: 900 }],
        ['198.51.100.2', null, 'failure', { scope: 'all', retryAfterSeconds: 300 }],
        ['198.51.100.2', null, 'failure', { scope: 'all', retryAfterSeconds: 300 }],
        ['198.51.100.2', null, 'failure', { scope: 'all', retryAfterSeconds: 300 }],
        ['198.51.100.1', null, 'failure', { scope: 'all', retryAfterSeconds: 300 }],
      ]
        .map((row) => JSON.stringify(row))
        .sort(),
    );
    clock.advance(300);
    const fresh = await start();
    expect((await enterUserCode(fresh.user_code, '198.51.100.1', approval)).ok).toBe(true);
  });
});
