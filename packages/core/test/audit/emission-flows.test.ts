import { DEVICE_CODE_GRANT_TYPE } from '@idgate/schema';
import { describe, expect, it } from 'vitest';
import { createAuditEventIds } from '../../src/audit/record.js';
import type { ExternalIdentity } from '../../src/connectors/types.js';
import {
  approveDeviceAuthorization,
  type DeviceApprovalContext,
  denyDeviceAuthorization,
} from '../../src/device/approval.js';
import { startDeviceAuthorization } from '../../src/device/authorization.js';
import type { TokenEndpointContext } from '../../src/grants/context.js';
import { handleTokenRequest } from '../../src/grants/token-endpoint.js';
import { grantUpstream, type UpstreamRevalidation } from '../../src/grants/upstream-revalidation.js';
import type { UserRecord } from '../../src/model.js';
import { hashSecret } from '../../src/secrets.js';
import { recordUpstreamRefusal, signInWithExternalIdentity } from '../../src/sign-in/external.js';
import { createMemoryStorage } from '../../src/testing.js';
import { client, ISSUER, keyRing, manualClock, SECRET, seededStorage } from '../helpers.js';

const details = (event: { details: object } | undefined) => (event?.details ?? {}) as Record<string, unknown>;

const upstreamIdentity: ExternalIdentity = {
  subject: 'u-100',
  username: 'Alice',
  email: 'alice@example.test',
  emailVerified: true,
  displayName: 'Alice',
  groups: [],
  upstreamState: 'upstream-refresh-token',
};

/** A device flow on memory storage, its approver signed in through the provider `corp`. */
async function deviceFlow() {
  const clock = manualClock();
  const { storage, hasher } = await seededStorage();
  await storage.clients.create(
    client({
      clientId: 'kubectl',
      public: true,
      grantTypes: [DEVICE_CODE_GRANT_TYPE, 'refresh_token'],
      scopes: ['openid', 'groups', 'offline_access'],
    }),
  );
  const findClient = (id: string) => storage.clients.findById(id);
  const auditIds = createAuditEventIds();
  const approval: DeviceApprovalContext = { clock, auditIds, findClient, storage };
  let answer: UpstreamRevalidation = 'current';
  const tokens: TokenEndpointContext = {
    issuer: ISSUER,
    keys: await keyRing('ES256', clock),
    clock,
    auditIds,
    findClient,
    passwords: { findUserByUsername: (u) => storage.users.findByUsername(u), hasher, dummyHash: 'x' },
    storage,
    lifetimes: { idToken: 3600, grant: 86_400, maxAccessToken: 3600 },
    revalidate: async () => answer,
  };
  const start = async () => {
    const started = await startDeviceAuthorization(
      { client_id: 'kubectl', scope: 'openid offline_access' },
      undefined,
      { clock, findClient, storage, verificationUri: `${ISSUER}/device` },
    );
    return { ...started, hash: await hashSecret(started.device_code) };
  };
  const approver = {
    user: (await storage.users.findById('u-alice')) as UserRecord,
    authTime: new Date(clock.now()),
    sessionId: null,
    upstream: await grantUpstream('corp', upstreamIdentity, SECRET, new Date(clock.now())),
    origin: { address: '203.0.113.7', userAgent: 'Firefox' },
  };
  const poll = (device_code: string) =>
    handleTokenRequest(
      { grant_type: DEVICE_CODE_GRANT_TYPE, device_code, client_id: 'kubectl' },
      undefined,
      tokens,
    );
  const refresh = (refresh_token: string, revalidation: UpstreamRevalidation) => {
    answer = revalidation;
    return handleTokenRequest(
      { grant_type: 'refresh_token', refresh_token, client_id: 'kubectl' },
      undefined,
      tokens,
    );
  };
  const recorded = (type: string) =>
    storage.auditEvents.list({ limit: 100 }).then((all) => all.filter((e) => e.type === type));
  return { clock, storage, approval, approver, start, poll, refresh, recorded };
}

describe('device authorization decisions', () => {
  it('record who approved or denied which client and scopes, never the user code', async () => {
    const { approval, approver, start, recorded } = await deviceFlow();
    const allowed = await start();
    const denied = await start();
    expect(await approveDeviceAuthorization(allowed.hash, approver, approval)).toEqual({ ok: true });
    expect(await denyDeviceAuthorization(denied.hash, approver, approval)).toEqual({ ok: true });
    // Decided already: no second event.
    expect((await approveDeviceAuthorization(allowed.hash, approver, approval)).ok).toBe(false);
    const events = [...(await recorded('device.approved')), ...(await recorded('device.denied'))];
    expect(events.map((e) => [e.type, e.outcome, e.actor.id, e.subject, e.clientId, e.address])).toEqual([
      ['device.approved', 'success', 'u-alice', 'u-alice', 'kubectl', '203.0.113.7'],
      ['device.denied', 'failure', 'u-alice', 'u-alice', 'kubectl', '203.0.113.7'],
    ]);
    // The client has no audiences: no resource to name.
    expect(events[0]?.details).toEqual({ scopes: ['openid', 'offline_access'], resources: [] });
    const all = JSON.stringify(events);
    for (const code of [allowed.user_code, denied.user_code, allowed.device_code])
      expect(all).not.toContain(code);
  });
});

describe('upstream re-validation on refresh', () => {
  it('records each check: vouched, unreachable, and gone with the grant revoked', async () => {
    const { clock, approval, approver, start, poll, refresh, recorded } = await deviceFlow();
    const { device_code, hash } = await start();
    await approveDeviceAuthorization(hash, approver, approval);
    clock.advance(1);
    const first = await poll(device_code);
    const second = await refresh(first.refresh_token as string, 'revalidated');
    const third = await refresh(second.refresh_token as string, 'unavailable');
    // Not due: nothing was checked, nothing is recorded.
    await refresh(third.refresh_token as string, 'current');
    const grantId = details((await recorded('token.issued'))[0]).grantId;
    const events = await recorded('upstream.revalidated');
    expect(
      events.map((e) => [e.outcome, details(e).reason, details(e).provider, details(e).grantId]),
    ).toEqual([
      ['success', null, 'corp', grantId],
      ['success', 'upstream_unavailable', 'corp', grantId],
    ]);
    expect(JSON.stringify(events)).not.toContain('upstream-refresh-token');
  });

  it('records a failure in the transaction that revokes the grant the upstream no longer vouches for', async () => {
    const { clock, storage, approval, approver, start, poll, refresh, recorded } = await deviceFlow();
    const { device_code, hash } = await start();
    await approveDeviceAuthorization(hash, approver, approval);
    clock.advance(1);
    const tokens = await poll(device_code);
    await expect(refresh(tokens.refresh_token as string, 'gone')).rejects.toThrow(/no longer knows/);
    const [event] = await recorded('upstream.revalidated');
    expect(event).toMatchObject({
      outcome: 'failure',
      subject: 'u-alice',
      clientId: 'kubectl',
      details: { provider: 'corp', reason: 'unknown_upstream' },
    });
    const grant = await storage.grants.findById(details(event).grantId as string);
    expect(grant?.revokedAt).not.toBeNull();
  });
});

describe('re-validation past the limit', () => {
  it('revokes the grant the upstream has not confirmed for too long, says since when, and records why', async () => {
    const { clock, storage, approval, approver, start, poll, refresh, recorded } = await deviceFlow();
    const { device_code, hash } = await start();
    await approveDeviceAuthorization(hash, approver, approval);
    const vouchedAt = approver.upstream.validatedAt.toISOString();
    clock.advance(1);
    const tokens = await poll(device_code);
    await expect(refresh(tokens.refresh_token as string, 'unconfirmed')).rejects.toMatchObject({
      code: 'invalid_grant',
      description: `the identity provider could not confirm the account since ${vouchedAt}`,
    });
    const [event] = await recorded('upstream.revalidated');
    expect(event).toMatchObject({
      outcome: 'failure',
      subject: 'u-alice',
      clientId: 'kubectl',
      details: { provider: 'corp', reason: 'upstream_unavailable_too_long' },
    });
    const grant = await storage.grants.findById(details(event).grantId as string);
    expect(grant?.revokedAt).not.toBeNull();
    expect(await recorded('refresh.rotated')).toEqual([]);
  });
});

describe('sign-in through an external identity provider', () => {
  it('records the upstream sign-in and the sign-in, refused or not', async () => {
    const storage = createMemoryStorage();
    const context = { storage, clock: manualClock(), auditIds: createAuditEventIds() };
    const policy = { provider: 'corp', linkByVerifiedEmail: false, groupsPrefix: 'corp:' };
    const origin = { userAgent: 'Firefox' };
    const refused = await signInWithExternalIdentity(
      upstreamIdentity,
      { ...policy, mapping: 'manual' },
      '203.0.113.9',
      context,
      origin,
    );
    expect(refused).toEqual({ ok: false, reason: 'not_linked' });
    const mapped = await signInWithExternalIdentity(
      upstreamIdentity,
      { ...policy, mapping: 'auto' },
      '203.0.113.9',
      context,
      origin,
    );
    const userId = mapped.ok ? mapped.user.id : 'none';
    const events = await storage.auditEvents.list({ limit: 10 });
    expect(events.map((e) => [e.type, e.outcome, e.subject, e.address, e.userAgent])).toEqual([
      ['upstream.sign-in', 'failure', null, '203.0.113.9', 'Firefox'],
      ['sign-in.failed', 'failure', null, '203.0.113.9', 'Firefox'],
      ['upstream.sign-in', 'success', userId, '203.0.113.9', 'Firefox'],
      ['sign-in.succeeded', 'success', userId, '203.0.113.9', 'Firefox'],
    ]);
    expect(events[0]?.details).toEqual({ provider: 'corp', reason: 'not_linked', upstreamMfaTrusted: false });
    expect(events[3]?.details).toEqual({
      method: 'upstream',
      provider: 'corp',
      channel: 'browser',
      username: 'alice',
      reason: null,
      groupsDropped: 0,
      upstreamMfaTrusted: false,
    });
    expect(JSON.stringify(events)).not.toContain('upstream-refresh-token');
  });

  it('records a refusal by the upstream itself, naming nobody', async () => {
    const storage = createMemoryStorage();
    await recordUpstreamRefusal(
      'corp',
      'access_denied',
      { storage, clock: manualClock(), auditIds: createAuditEventIds() },
      { address: '203.0.113.9' },
    );
    const events = await storage.auditEvents.list({ limit: 10 });
    expect(events.map((e) => [e.type, e.outcome, e.actor, details(e).reason, details(e).username])).toEqual([
      ['upstream.sign-in', 'failure', { kind: 'user', id: null }, 'access_denied', undefined],
      ['sign-in.failed', 'failure', { kind: 'user', id: null }, 'access_denied', null],
    ]);
  });
});
