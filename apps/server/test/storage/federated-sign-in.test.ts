import {
  type ExternalIdentity,
  type IdentityMappingPolicy,
  type Storage,
  signInWithExternalIdentity,
} from '@idgate/core';
import { describe, expect, it } from 'vitest';
import { testDatabaseUrls } from '../helpers/databases.js';
import { testClock } from '../helpers/harness.js';
import { newUser, useStorage } from './fixtures.js';

const identity: ExternalIdentity = {
  subject: 'u-100',
  username: 'Alice',
  email: 'alice@corp.test',
  emailVerified: true,
  displayName: 'Alice',
  groups: ['sre'],
};
const AUTO: IdentityMappingPolicy = {
  provider: 'corp',
  mapping: 'auto',
  linkByVerifiedEmail: false,
  groupsPrefix: 'corp:',
};

// A federated sign-in writes the user it creates, the link and its audit events in one transaction
// of the real storage: on PostgreSQL a username taken meanwhile is a failed statement inside it.
describe.each(testDatabaseUrls())('a federated sign-in on $name', (kind) => {
  const fixture = useStorage(kind);
  const clock = testClock();

  it('retries a taken username inside its transaction and commits the user, the link and the events', async () => {
    const { storage } = fixture();
    await storage.users.create(newUser({ id: 'u-local', username: 'alice', email: null }));
    const mapped = await signInWithExternalIdentity(identity, AUTO, '203.0.113.9', { storage, clock });
    expect(mapped).toMatchObject({
      ok: true,
      created: true,
      user: { username: expect.stringMatching(/^alice-[0-9a-f]{6}$/) },
    });
    const userId = mapped.ok ? mapped.user.id : '';
    expect((await storage.identities.find('corp', 'u-100'))?.userId).toBe(userId);
    const events = await storage.auditEvents.list({ limit: 10 });
    expect(events.map((e) => [e.type, e.subject, e.outcome])).toEqual([
      ['upstream.sign-in', userId, 'success'],
      ['sign-in.succeeded', userId, 'success'],
    ]);

    // The same identity again: the link, no new user.
    const again = await signInWithExternalIdentity(identity, AUTO, '203.0.113.9', { storage, clock });
    expect(again).toMatchObject({ ok: true, created: false, user: { id: userId } });
    expect(await storage.users.count()).toBe(2);
  });

  it('leaves neither the account nor the events when its transaction rolls back after recording them', async () => {
    const { storage } = fixture();
    await storage.users.create(newUser({ id: 'u-local', username: 'alice', email: null }));
    const boom = new Error('the commit failed');
    // The storage's own transaction, failing once the sign-in's work in it is done. (Its audit
    // events are chained and inserted as the transaction's last statements, so they go with it.)
    const failing: Storage = {
      ...storage,
      transaction: (work) =>
        storage.transaction(async (tx) => {
          await work(tx);
          throw boom;
        }),
    };
    await expect(
      signInWithExternalIdentity(identity, AUTO, '203.0.113.9', { storage: failing, clock }),
    ).rejects.toBe(boom);
    expect(await storage.users.count()).toBe(1);
    expect(await storage.identities.find('corp', 'u-100')).toBeUndefined();
    expect(await storage.auditEvents.list({ limit: 10 })).toEqual([]);
    // The same sign-in committed leaves both: what the rolled-back one would have left.
    await signInWithExternalIdentity(identity, AUTO, '203.0.113.9', { storage, clock });
    expect(await storage.identities.find('corp', 'u-100')).toBeDefined();
    expect(await storage.auditEvents.list({ limit: 10 })).toHaveLength(2);
  });
});
