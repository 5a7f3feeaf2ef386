import { CreateUserInput } from '@idgate/schema';
import { describe, expect, it } from 'vitest';
import type { AdminError } from '../../src/admin/errors.js';
import {
  endAllUserSessions,
  endUserSession,
  listUserGrants,
  listUserSessions,
  revokeAllUserGrants,
  revokeUserGrant,
} from '../../src/admin/sessions.js';
import { createUser, setUserDisabled, updateUser } from '../../src/admin/users.js';
import type { GrantRecord } from '../../src/model.js';
import { client } from '../helpers.js';
import { adminPorts, rejection } from './ports.js';

const HOUR = 3_600_000;

async function setup() {
  const ports = adminPorts();
  const alice = await createUser(ports, CreateUserInput.parse({ username: 'alice' }));
  const bob = await createUser(ports, CreateUserInput.parse({ username: 'bob' }));
  await ports.storage.clients.create(client({ clientId: 'cl_web', name: 'Web' }));
  await ports.storage.clients.create(client({ clientId: 'cl_cli', name: 'CLI' }));
  const now = () => ports.clock.now();
  const session = async (id: string, userId: string, fields: { createdAt?: number; ttl?: number } = {}) => {
    const createdAt = new Date(fields.createdAt ?? now());
    await ports.storage.sessions.create({
      id,
      secretHash: `hash-${id}`,
      userId,
      authTime: createdAt,
      createdAt,
      expiresAt: new Date(createdAt.getTime() + (fields.ttl ?? 8 * HOUR)),
      endedAt: null,
      sourceAddress: '198.51.100.4',
      userAgent: 'Firefox',
    });
  };
  const grant = async (id: string, userId: string, fields: Partial<GrantRecord> = {}) =>
    ports.storage.grants.create({
      id,
      userId,
      clientId: 'cl_web',
      scope: ['openid', 'offline_access'],
      authTime: new Date(now()),
      sessionId: null,
      createdAt: new Date(now()),
      expiresAt: new Date(now() + 24 * HOUR),
      revokedAt: null,
      lastUsedAt: new Date(now()),
      lastUsedAddress: '203.0.113.9',
      ...fields,
    });
  return { ports, alice: alice.user, bob: bob.user, session, grant, now };
}

const isRevoked = (ports: ReturnType<typeof adminPorts>, grantId: string) =>
  ports.storage.revocations.isRevoked('sid', grantId, new Date(ports.clock.now()));

describe('listing and ending browser sessions', () => {
  it("lists a user's live sessions oldest first, with the applications they signed in to", async () => {
    const { ports, alice, bob, session, grant, now } = await setup();
    await session('s-2', alice.id, { createdAt: now() + 1000 });
    await session('s-1', alice.id);
    await session('s-bob', bob.id);
    await session('s-old', alice.id, { createdAt: now() - 9 * HOUR });
    await grant('g-1', alice.id, { sessionId: 's-1', createdAt: new Date(now() + 5000) });
    await grant('g-2', alice.id, { sessionId: 's-1', clientId: 'cl_cli', createdAt: new Date(now() + 2000) });
    await grant('g-3', alice.id, { sessionId: 's-1', clientId: 'cl_gone' });

    const { items, nextCursor } = await listUserSessions(ports, 'ALICE');
    expect(nextCursor).toBeNull();
    expect(items.map((s) => s.id)).toEqual(['s-1', 's-2']);
    expect(items[0]).toEqual({
      id: 's-1',
      createdAt: '2026-11-21T10:00:00.000Z',
      lastSeenAt: '2026-11-21T10:00:05.000Z',
      expiresAt: '2026-11-21T18:00:00.000Z',
      sourceAddress: '198.51.100.4',
      userAgent: 'Firefox',
      clients: [
        { clientId: 'cl_gone', name: null },
        { clientId: 'cl_cli', name: 'CLI' },
        { clientId: 'cl_web', name: 'Web' },
      ],
    });
    expect(items[1]).toMatchObject({ lastSeenAt: '2026-11-21T10:00:01.000Z', clients: [] });
  });

  it('pages with an opaque cursor and refuses a bad limit or cursor', async () => {
    const { ports, alice, session, now } = await setup();
    for (let i = 0; i < 5; i++) await session(`s-${i}`, alice.id, { createdAt: now() + (i % 2) * 1000 });
    const first = await listUserSessions(ports, 'alice', { limit: '2' });
    expect(first.items.map((s) => s.id)).toEqual(['s-0', 's-2']);
    const second = await listUserSessions(ports, 'alice', { limit: '2', cursor: first.nextCursor });
    expect(second.items.map((s) => s.id)).toEqual(['s-4', 's-1']);
    const third = await listUserSessions(ports, 'alice', { limit: '2', cursor: second.nextCursor });
    expect(third).toMatchObject({ items: [{ id: 's-3' }], nextCursor: null });

    for (const [query, message] of [
      [{ limit: '0' }, 'limit'],
      [{ limit: '501' }, 'limit'],
      [{ cursor: 'not a cursor' }, 'cursor'],
      [{ cursor: 'WzEsMl0' }, 'cursor'],
    ] as const) {
      const error = (await rejection(listUserSessions(ports, 'alice', query))) as AdminError;
      expect(error).toMatchObject({ code: 'invalid_input', problemCode: 'invalid_session' });
      expect(error.message).toContain(message);
    }
  });

  it('ends one session and revokes the grants made in it, refusing what is not a live session of the user', async () => {
    const { ports, alice, bob, session, grant, now } = await setup();
    await session('s-1', alice.id);
    await session('s-2', alice.id);
    await session('s-bob', bob.id);
    await grant('g-1', alice.id, { sessionId: 's-1' });
    await grant('g-2', alice.id, { sessionId: 's-2' });

    expect(await endUserSession(ports, 'alice', 's-1')).toEqual({ revokedGrants: 1 });
    expect((await ports.storage.sessions.findById('s-1'))?.endedAt).toEqual(new Date(now()));
    expect(await isRevoked(ports, 'g-1')).toBe(true);
    expect(await isRevoked(ports, 'g-2')).toBe(false);
    expect((await listUserSessions(ports, 'alice')).items.map((s) => s.id)).toEqual(['s-2']);

    for (const [username, id, code, problem] of [
      ['alice', 's-1', 'not_found', 'session_not_found'],
      ['alice', 's-bob', 'not_found', 'session_not_found'],
      ['alice', 'nope', 'not_found', 'session_not_found'],
      ['alice', 'bad id!', 'invalid_input', 'invalid_session'],
      ['carol', 's-2', 'not_found', 'user_not_found'],
    ] as const) {
      expect(await rejection(endUserSession(ports, username, id))).toMatchObject({
        code,
        problemCode: problem,
      });
    }
    expect((await ports.storage.sessions.findById('s-bob'))?.endedAt).toBeNull();
  });

  it('ends every live session of a user', async () => {
    const { ports, alice, bob, session, grant, now } = await setup();
    await session('s-1', alice.id);
    await session('s-2', alice.id);
    await session('s-old', alice.id, { createdAt: now() - 9 * HOUR });
    await session('s-bob', bob.id);
    await grant('g-1', alice.id, { sessionId: 's-1' });
    await grant('g-2', alice.id);
    expect(await endAllUserSessions(ports, 'alice')).toEqual({ ended: 2, revokedGrants: 1 });
    expect((await listUserSessions(ports, 'alice')).items).toEqual([]);
    expect((await listUserSessions(ports, 'bob')).items).toHaveLength(1);
    expect(await isRevoked(ports, 'g-2')).toBe(false);
    expect(await endAllUserSessions(ports, 'alice')).toEqual({ ended: 0, revokedGrants: 0 });
  });
});

describe('listing and revoking grants', () => {
  it("lists a user's live grants with client name, scopes and last use", async () => {
    const { ports, alice, bob, grant, now } = await setup();
    await grant('g-1', alice.id, {
      lastUsedAt: new Date(now() + 60_000),
      lastUsedAddress: '192.0.2.7',
      resources: ['kubernetes:prod'],
    });
    await grant('g-2', alice.id, { clientId: 'cl_cli', createdAt: new Date(now() + 1), sessionId: 's-1' });
    await grant('g-revoked', alice.id, { revokedAt: new Date(now()) });
    await grant('g-expired', alice.id, { expiresAt: new Date(now()) });
    await grant('g-bob', bob.id);
    const { items, nextCursor } = await listUserGrants(ports, 'alice');
    expect(nextCursor).toBeNull();
    expect(items).toEqual([
      {
        id: 'g-1',
        clientId: 'cl_web',
        clientName: 'Web',
        scopes: ['openid', 'offline_access'],
        sessionId: null,
        createdAt: '2026-11-21T10:00:00.000Z',
        lastUsedAt: '2026-11-21T10:01:00.000Z',
        lastUsedAddress: '192.0.2.7',
        expiresAt: '2026-11-22T10:00:00.000Z',
        resources: ['kubernetes:prod'],
      },
      // Opened before idgate recorded the resources a sign-in approves.
      expect.objectContaining({
        id: 'g-2',
        clientId: 'cl_cli',
        clientName: 'CLI',
        sessionId: 's-1',
        resources: null,
      }),
    ]);
    const page = await listUserGrants(ports, 'alice', { limit: '1' });
    expect(page.items.map((g) => g.id)).toEqual(['g-1']);
    const next = await listUserGrants(ports, 'alice', { limit: '1', cursor: page.nextCursor });
    expect(next).toMatchObject({ items: [{ id: 'g-2' }], nextCursor: null });
    expect(await rejection(listUserGrants(ports, 'alice', { cursor: 'x' }))).toMatchObject({
      problemCode: 'invalid_grant_id',
    });
  });

  it('revokes one grant (publishing its revocation) and refuses what is not a live grant of the user', async () => {
    const { ports, alice, bob, grant } = await setup();
    await grant('g-1', alice.id);
    await grant('g-2', alice.id);
    await grant('g-bob', bob.id);
    await revokeUserGrant(ports, 'alice', 'g-1');
    expect(await isRevoked(ports, 'g-1')).toBe(true);
    expect(await isRevoked(ports, 'g-2')).toBe(false);
    expect((await listUserGrants(ports, 'alice')).items.map((g) => g.id)).toEqual(['g-2']);
    for (const [username, id, problem] of [
      ['alice', 'g-1', 'grant_not_found'],
      ['alice', 'g-bob', 'grant_not_found'],
      ['alice', 'a/b', 'invalid_grant_id'],
      ['alice', '', 'invalid_grant_id'],
      ['nobody', 'g-2', 'user_not_found'],
    ] as const) {
      expect(await rejection(revokeUserGrant(ports, username, id))).toMatchObject({ problemCode: problem });
    }
    expect((await ports.storage.grants.findById('g-bob'))?.revokedAt).toBeNull();
  });

  it('revokes every grant of a user', async () => {
    const { ports, alice, bob, grant } = await setup();
    await grant('g-1', alice.id);
    await grant('g-2', alice.id, { sessionId: 's-1' });
    await grant('g-bob', bob.id);
    expect(await revokeAllUserGrants(ports, 'alice')).toEqual({ revoked: 2 });
    expect(await isRevoked(ports, 'g-2')).toBe(true);
    expect(await isRevoked(ports, 'g-bob')).toBe(false);
    expect(await revokeAllUserGrants(ports, 'alice')).toEqual({ revoked: 0 });
    expect((await listUserGrants(ports, 'bob')).items).toHaveLength(1);
  });
});

describe('disabling a user', () => {
  it("ends the user's sessions and revokes all its grants in the change's transaction; enabling restores none", async () => {
    const { ports, alice, bob, session, grant } = await setup();
    await session('s-1', alice.id);
    await session('s-bob', bob.id);
    await grant('g-1', alice.id, { sessionId: 's-1' });
    await grant('g-2', alice.id, { clientId: 'cl_cli' });
    await grant('g-bob', bob.id);

    expect(await setUserDisabled(ports, 'alice', true)).toMatchObject({
      changed: true,
      endedSessions: 1,
      revokedGrants: 2,
    });
    expect((await listUserSessions(ports, 'alice')).items).toEqual([]);
    expect((await listUserGrants(ports, 'alice')).items).toEqual([]);
    expect([
      await isRevoked(ports, 'g-1'),
      await isRevoked(ports, 'g-2'),
      await isRevoked(ports, 'g-bob'),
    ]).toEqual([true, true, false]);
    const events = await ports.storage.auditEvents.list({ limit: 10 });
    expect(events.slice(-3).map((e) => [e.type, e.subject, e.details])).toEqual([
      ['admin.changed', alice.id, expect.objectContaining({ objectKind: 'user', after: { disabled: true } })],
      ['admin.changed', alice.id, expect.objectContaining({ objectKind: 'session', operation: 'end-all' })],
      [
        'token.revoked',
        alice.id,
        {
          reason: 'user-disabled',
          tokenType: 'grant',
          grantIds: expect.arrayContaining(['g-1', 'g-2']),
          jti: null,
        },
      ],
    ]);

    // Enabling restores nothing; bob, disabled through updateUser, loses his grant the same way.
    expect(await setUserDisabled(ports, 'alice', false)).toMatchObject({
      endedSessions: 0,
      revokedGrants: 0,
    });
    expect((await listUserGrants(ports, 'alice')).items).toEqual([]);
    await updateUser(ports, 'bob', { disabled: true });
    expect((await listUserSessions(ports, 'bob')).items).toEqual([]);
    expect(await isRevoked(ports, 'g-bob')).toBe(true);
  });

  it('leaves sessions and grants alone when the change rolls back', async () => {
    const { ports, alice, session, grant } = await setup();
    await session('s-1', alice.id);
    await grant('g-1', alice.id, { sessionId: 's-1' });
    const boom = new Error('a later step failed');
    await expect(
      ports.storage.transaction(async (tx) => {
        await setUserDisabled({ ...ports, storage: tx }, 'alice', true);
        throw boom;
      }),
    ).rejects.toBe(boom);
    expect((await listUserSessions(ports, 'alice')).items.map((s) => s.id)).toEqual(['s-1']);
    expect((await listUserGrants(ports, 'alice')).items.map((g) => g.id)).toEqual(['g-1']);
    expect(await isRevoked(ports, 'g-1')).toBe(false);
  });
});
