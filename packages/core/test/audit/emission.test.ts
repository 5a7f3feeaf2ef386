import { CreateUserInput } from '@idgate/schema';
import { describe, expect, it } from 'vitest';
import { createClient, removeClient, rotateClientSecret, updateClient } from '../../src/admin/clients.js';
import { addCluster, removeCluster } from '../../src/admin/clusters.js';
import { linkIdentity, unlinkIdentity } from '../../src/admin/identities.js';
import {
  addIdentityProvider,
  removeIdentityProvider,
  setIdentityProviderDisabled,
  updateIdentityProvider,
} from '../../src/admin/identity-providers.js';
import { rotateSigningKeys } from '../../src/admin/signing-keys.js';
import { createUser, deleteUser, setUserPassword, unlockUser, updateUser } from '../../src/admin/users.js';
import { giveConsent } from '../../src/authorize/consent.js';
import { issueAuthorizationCode } from '../../src/authorize/flow.js';
import { LoginThrottle } from '../../src/security/login-throttle.js';
import { endBrowserSession } from '../../src/sessions/end-session.js';
import { signInWithPassword } from '../../src/sign-in/password.js';
import { adminPorts } from '../admin/ports.js';
import { manualClock } from '../helpers.js';

const cli = () => ({ kind: 'cli' as const, id: null });
const alice = CreateUserInput.parse({ username: 'alice', email: 'alice@example.test', groups: ['dev'] });
const events = (ports: { storage: { auditEvents: { list(q: { limit: number }): Promise<unknown[]> } } }) =>
  ports.storage.auditEvents.list({ limit: 100 }) as Promise<{ type: string; [k: string]: unknown }[]>;

describe('admin changes of users', () => {
  it('record who changed what, with only the changed fields and never a password or hash', async () => {
    const ports = adminPorts({ auditActor: cli });
    const { user } = await createUser(ports, alice, 'correct horse battery');
    await updateUser(ports, 'alice', { groups: ['dev', 'ops'], email: 'alice@example.test' });
    await setUserPassword(ports, 'alice', 'another long passphrase');
    await unlockUser(ports, 'alice', { by: 'cli' });
    await deleteUser(ports, 'alice');
    const recorded = await events(ports);
    expect(recorded.map((e) => [e.type, (e.details as { action: string }).action])).toEqual([
      ['admin.changed', 'created'],
      ['admin.changed', 'updated'],
      ['admin.changed', 'updated'],
      ['admin.changed', 'updated'],
      ['admin.changed', 'deleted'],
    ]);
    expect(recorded.every((e) => (e.actor as { kind: string }).kind === 'cli' && e.subject === user.id)).toBe(
      true,
    );
    expect(recorded[0]?.details).toMatchObject({
      before: null,
      after: { username: 'alice', email: 'alice@example.test', groups: ['dev'], disabled: false },
    });
    expect(recorded[1]?.details).toMatchObject({
      before: { groups: ['dev'] },
      after: { groups: ['dev', 'ops'] },
    });
    expect(recorded[2]?.details).toMatchObject({ operation: 'set-password', before: {}, after: {} });
    expect(recorded[3]?.details).toMatchObject({ operation: 'unlock' });
    expect(recorded[4]?.details).toMatchObject({ after: null, before: { username: 'alice' } });
    expect(JSON.stringify(recorded)).not.toMatch(/correct horse|another long|passwordHash|test\$/);
  });

  it('are acted by idgate itself when the ports name no actor', async () => {
    const ports = adminPorts();
    await createUser(ports, alice, 'correct horse battery');
    expect((await events(ports))[0]).toMatchObject({ actor: { kind: 'system', id: null } });
  });

  it('leave no event when the change rolls back after its event was recorded', async () => {
    const ports = adminPorts({ auditActor: cli });
    await createUser(ports, alice, 'correct horse battery');
    const before = await events(ports);
    const boom = new Error('a later step of the change failed');
    await expect(
      ports.storage.transaction(async (tx) => {
        await updateUser({ ...ports, storage: tx }, 'alice', { disabled: true });
        expect(await tx.auditEvents.list({ limit: 100 })).toHaveLength(before.length + 1);
        throw boom;
      }),
    ).rejects.toBe(boom);
    expect(await events(ports)).toEqual(before);
    expect((await ports.storage.users.findByUsername('alice'))?.disabled).toBe(false);
  });
});

describe('admin changes of clients, clusters, identity providers and identities', () => {
  type Change = { objectKind: string; objectId: string; action: string; operation: string | null };
  const changes = async (ports: Parameters<typeof events>[0]) =>
    (await events(ports)).map((e) => e.details as Change & Record<string, unknown>);

  it('record a client created, changed, given a new secret and deleted, never with its secret', async () => {
    const ports = adminPorts({ auditActor: cli });
    const created = await createClient(ports, { name: 'CI' });
    await updateClient(ports, created.clientId, { trusted: true, name: 'CI' });
    const rotated = await rotateClientSecret(ports, created.clientId, { gracePeriod: 60 });
    await removeClient(ports, created.clientId);
    const recorded = await changes(ports);
    expect(recorded.map((d) => [d.objectKind, d.objectId, d.action, d.operation])).toEqual([
      ['client', created.clientId, 'created', null],
      ['client', created.clientId, 'updated', null],
      ['client', created.clientId, 'updated', 'rotate-secret'],
      ['client', created.clientId, 'deleted', null],
    ]);
    expect(recorded[0]).toMatchObject({ before: null, after: { name: 'CI', public: false } });
    expect(recorded[1]).toMatchObject({ before: { trusted: false }, after: { trusted: true } });
    expect(recorded[2]).toMatchObject({ before: {}, after: { gracePeriod: 60 } });
    expect(recorded[3]).toMatchObject({ before: { name: 'CI' }, after: null });
    const all = JSON.stringify(await events(ports));
    for (const secret of [created.clientSecret, rotated.clientSecret]) expect(all).not.toContain(secret);
    expect(all).not.toMatch(/secretHash|previousSecret/);
    expect((await events(ports)).every((e) => e.clientId === created.clientId)).toBe(true);
  });

  it('record a cluster added (with its API key and the kubectl client) and removed', async () => {
    const ports = adminPorts({ auditActor: cli });
    const { cluster, apiKey, apiKeyId } = await addCluster(ports, { name: 'prod' });
    await removeCluster(ports, 'prod');
    const recorded = await changes(ports);
    expect(recorded.map((d) => [d.objectKind, d.action])).toEqual([
      ['client', 'created'],
      ['cluster', 'created'],
      ['api-key', 'created'],
      ['cluster', 'deleted'],
    ]);
    expect(recorded[1]).toMatchObject({
      objectId: 'prod',
      after: { name: 'prod', audience: cluster.audience },
    });
    expect(recorded[2]).toMatchObject({ objectId: apiKeyId });
    expect(recorded[3]).toMatchObject({ objectId: 'prod', before: { audience: cluster.audience } });
    expect(JSON.stringify(await events(ports))).not.toContain(apiKey);
  });

  it('record an identity provider and its identities, its settings changed and its secrets never', async () => {
    const ports = adminPorts({ auditActor: cli });
    await createUser(ports, alice, 'correct horse battery');
    const github = { type: 'github', name: 'github', clientId: 'Iv1.x', clientSecret: 'first-plain-secret' };
    await addIdentityProvider(ports, github);
    await updateIdentityProvider(ports, 'github', { clientId: 'Iv1.y', clientSecret: 'second-plain-secret' });
    await setIdentityProviderDisabled(ports, 'github', true);
    await linkIdentity(ports, { username: 'alice', provider: 'github', subject: '583231' });
    await unlinkIdentity(ports, { username: 'alice', provider: 'github', subject: '583231' });
    await removeIdentityProvider(ports, 'github');
    const recorded = (await changes(ports)).slice(1);
    expect(recorded.map((d) => [d.objectKind, d.objectId, d.action, d.operation])).toEqual([
      ['identity-provider', 'github', 'created', null],
      ['identity-provider', 'github', 'updated', 'rotate-secret'],
      ['identity-provider', 'github', 'updated', 'disable'],
      ['identity', 'github:583231', 'created', 'link'],
      ['identity', 'github:583231', 'deleted', 'unlink'],
      ['identity-provider', 'github', 'deleted', null],
    ]);
    expect(recorded[0]).toMatchObject({ before: null, after: { name: 'github', clientId: 'Iv1.x' } });
    expect(recorded[1]).toMatchObject({ before: { clientId: 'Iv1.x' }, after: { clientId: 'Iv1.y' } });
    expect(recorded[2]).toMatchObject({ before: { disabled: false }, after: { disabled: true } });
    expect(recorded[3]).toMatchObject({ after: { provider: 'github', subject: '583231' } });
    const all = JSON.stringify(await events(ports));
    expect(all).not.toMatch(/plain-secret|clientSecret/);
  });
});

describe('key rotation', () => {
  it('records the new key, the keys it retires and what triggered it', async () => {
    const ports = adminPorts({ auditActor: cli });
    const first = await rotateSigningKeys(ports);
    const second = await rotateSigningKeys(ports);
    const recorded = await events(ports);
    expect(recorded.map((e) => e.details)).toEqual([
      expect.objectContaining({ kid: first.created.kid, algorithm: 'ES256', retired: [], trigger: 'cli' }),
      expect.objectContaining({ kid: second.created.kid, retired: [first.created.kid], trigger: 'cli' }),
    ]);
  });
});

describe('browser events', () => {
  it('records consent, a code (never the code) and a sign-out with the grants it revoked', async () => {
    const { storage, auditIds } = adminPorts();
    const clock = manualClock();
    const origin = { address: '203.0.113.7', userAgent: 'Firefox' };
    await giveConsent(
      'u1',
      'cl_web',
      { scope: ['openid'] },
      {
        consents: storage.consents,
        clock,
        auditIds,
        audit: { events: storage.auditEvents, origin },
      },
    );
    const code = await issueAuthorizationCode(
      { clientId: 'cl_web', redirectUri: 'https://rp/cb', scope: ['openid'] } as Parameters<
        typeof issueAuthorizationCode
      >[0],
      { user: { id: 'u1' } as never, authTime: new Date(clock.now()), sessionId: 's1', fresh: true },
      { clock, auditIds, codes: storage.authorizationCodes, audit: { events: storage.auditEvents, origin } },
    );
    await endBrowserSession(
      's1',
      { revokeGrants: 'all', userId: 'u1', origin },
      { storage, clock, auditIds, maxTokenLifetimeSeconds: 60 },
    );
    const recorded = await storage.auditEvents.list({ limit: 10 });
    expect(recorded.map((e) => [e.type, e.subject, e.address])).toEqual([
      ['consent.granted', 'u1', '203.0.113.7'],
      ['code.issued', 'u1', '203.0.113.7'],
      ['sign-out', 'u1', '203.0.113.7'],
    ]);
    expect(recorded[2]?.details).toEqual({ grantsRevoked: 0 });
    expect(JSON.stringify(recorded)).not.toContain(code);
  });
});

describe('password sign-in', () => {
  it('records success, failure and a lock, with the typed username and never the password', async () => {
    const ports = adminPorts();
    await createUser(ports, alice, 'correct horse battery');
    const clock = manualClock();
    const throttle = new LoginThrottle(
      ports.storage.loginAttempts,
      { maxFailures: 2, windowSeconds: 600, maxFailuresPerAddress: 100 },
      clock,
    );
    const context = {
      passwords: {
        findUserByUsername: (n: string) => ports.storage.users.findByUsername(n),
        hasher: ports.hasher,
        dummyHash: await ports.hasher.hash('x'),
      },
      throttle,
      audit: { events: ports.storage.auditEvents, clock, ids: ports.auditIds },
    };
    const attempt = (password: string, sourceAddress: string) =>
      signInWithPassword({ username: 'Alice', password, sourceAddress, userAgent: 'curl' }, context);
    expect((await attempt('correct horse battery', '198.51.100.1')).ok).toBe(true);
    clock.advance(1);
    // From an address the account never signed in from: smart lockout counts these apart.
    await attempt('wrong one', '198.51.100.2');
    await attempt('wrong two', '198.51.100.2');
    expect(await attempt('correct horse battery', '198.51.100.2')).toMatchObject({
      ok: false,
      failure: 'locked',
    });
    const all = await ports.storage.auditEvents.list({ limit: 10 });
    const recorded = all.filter((e) => e.type.startsWith('sign-in'));
    const userId = (await ports.storage.users.findByUsername('alice'))?.id;
    // Failed and locked sign-ins of the account name its user; the second failure starts the lock.
    expect(
      all
        .filter((e) => e.type !== 'admin.changed')
        .map((e) => [e.type, e.outcome, e.subject, (e.details as { reason?: string | null }).reason]),
    ).toEqual([
      ['sign-in.succeeded', 'success', userId, null],
      ['sign-in.failed', 'failure', userId, 'invalid_credentials'],
      ['sign-in.failed', 'failure', userId, 'invalid_credentials'],
      ['lockout.started', 'failure', userId, undefined],
      ['sign-in.locked', 'failure', userId, 'account'],
    ]);
    expect(all.find((e) => e.type === 'lockout.started')).toMatchObject({
      actor: { kind: 'system', id: null },
      address: '198.51.100.2',
      details: {
        scope: 'account',
        provider: 'password',
        username: 'alice',
        lockedUntil: new Date(clock.now() + 600_000).toISOString(),
      },
    });
    expect(recorded[0]).toMatchObject({
      userAgent: 'curl',
      details: { username: 'alice', channel: 'browser', method: 'password' },
    });
    expect(JSON.stringify(recorded)).not.toMatch(/correct horse|wrong one|wrong two/);
  });
});
