import { type Storage, StorageUnavailableError } from '@idgate/core';
import { createMemoryStorage } from '@idgate/core/testing';
import { beforeEach, describe, expect, it } from 'vitest';
import { LocalChanges } from '../../src/cache/change-log.js';
import { Directory } from '../../src/cache/directory.js';

// The directory through a database outage: a resync that fails keeps the last good state, what
// was known before a resync is answered while the database cannot answer, and past
// `maxStalenessSeconds` without hearing from the database nothing is answered from memory.
// Time is the injected clock's.

const T0 = Date.parse('2026-11-23T12:00:00Z');

interface Rig {
  directory: Directory;
  storage: Storage;
  clock: { now(): number; advance(ms: number): void };
  /** Makes every read of the wrapped repositories fail as an outage would. */
  down(yes: boolean): void;
  /**
   * Makes every read of users wait (a frozen database nobody has noticed yet) until `fail()`
   * fails them as the query timeout or the heartbeat would.
   */
  freeze(): { fail(): void };
  /** What the health state says (the directory's `storageAvailable`). */
  available: { value: boolean };
  reads: { users: number };
  synced(): void;
}

async function rig(maxStalenessSeconds?: number): Promise<Rig> {
  const base = createMemoryStorage();
  let now = T0;
  const clock = {
    now: () => now,
    advance(ms: number) {
      now += ms;
    },
  };
  let out = false;
  let frozen: Array<() => void> | undefined;
  const reads = { users: 0 };
  const fail = () => Promise.reject(new StorageUnavailableError('unreachable'));
  const waitFrozen = (waiting: Array<() => void>) =>
    new Promise<never>((_, reject) => waiting.push(() => reject(new StorageUnavailableError('timeout'))));
  const storage: Storage = {
    ...base,
    users: {
      ...base.users,
      findById: (id) => {
        reads.users++;
        if (frozen !== undefined) return waitFrozen(frozen);
        return out ? fail() : base.users.findById(id);
      },
    },
    revocations: {
      ...base.revocations,
      listLive: (at) => (out ? fail() : base.revocations.listLive(at)),
      isRevoked: (kind, value, at) => (out ? fail() : base.revocations.isRevoked(kind, value, at)),
    },
  };
  await base.users.create({
    id: 'u1',
    username: 'ann',
    email: null,
    displayName: null,
    groups: ['dev'],
    passwordHash: null,
    createdAt: new Date(T0),
  } as Parameters<Storage['users']['create']>[0]);
  const available = { value: true };
  const directory = new Directory({
    storage,
    clock,
    reloadKeys: async () => undefined,
    maxTokenLifetimeSeconds: 3600,
    ...(maxStalenessSeconds === undefined ? {} : { maxStalenessSeconds }),
    storageAvailable: () => available.value,
  });
  let onSynced = () => {};
  await directory.start(new LocalChanges(), {
    subscribe: () => {},
    onResync: () => {},
    onSynced: (listener) => {
      onSynced = listener;
    },
  });
  return {
    directory,
    storage,
    clock,
    down: (yes) => {
      out = yes;
    },
    freeze() {
      const waiting: Array<() => void> = [];
      frozen = waiting;
      return {
        fail() {
          frozen = undefined;
          for (const reject of waiting) reject();
        },
      };
    },
    available,
    reads,
    synced: () => onSynced(),
  };
}

const rejection = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: unknown) => error,
  );

describe('the directory through an outage', () => {
  let r: Rig;
  beforeEach(async () => {
    r = await rig();
  });

  it('keeps what it holds when a resync fails, for an outage of any length (no staleness limit)', async () => {
    expect((await r.directory.storage.users.findById('u1'))?.username).toBe('ann');
    r.down(true);
    expect(await r.directory.resync()).toBe(false);
    r.clock.advance(30 * 86_400_000);
    expect(r.directory.stale).toBe(false);
    expect((await r.directory.storage.users.findById('u1'))?.username).toBe('ann');
    expect(await r.directory.storage.revocations.isRevoked('jti', 'x', new Date(r.clock.now()))).toBe(false);
  });

  it('answers what it knew before the last resync while the database cannot answer, and asks again once it can', async () => {
    await r.directory.storage.users.findById('u1');
    expect(await r.directory.resync()).toBe(true);
    r.down(true);
    // Not yet known to be down: the read fails, the previous answer is given.
    expect((await r.directory.storage.users.findById('u1'))?.username).toBe('ann');
    // Known to be down: the previous answer at once, without a read.
    r.available.value = false;
    const before = r.reads.users;
    expect((await r.directory.storage.users.findById('u1'))?.username).toBe('ann');
    expect(r.reads.users).toBe(before);
    // Something never known is not made up.
    expect(await rejection(r.directory.storage.users.findById('u2'))).toBeInstanceOf(StorageUnavailableError);
    // Back: the database is asked again (the previous answer was not kept as current).
    r.down(false);
    r.available.value = true;
    await r.directory.storage.users.findById('u1');
    expect(r.reads.users).toBeGreaterThan(before);
  });
});

describe('a frozen database nobody has noticed yet', () => {
  let r: Rig;
  beforeEach(async () => {
    r = await rig();
  });

  it('after a resync, what was known before it is answered at once while its reload waits', async () => {
    await r.directory.storage.users.findById('u1');
    expect(await r.directory.resync()).toBe(true);
    const freeze = r.freeze();
    const reads = r.reads.users;
    // Settles at once: a hanging read would leave this pending.
    const answered = await Promise.race([
      r.directory.storage.users.findById('u1'),
      new Promise<'waited'>((resolve) => setImmediate(() => resolve('waited'))),
    ]);
    expect(answered).toMatchObject({ username: 'ann' });
    expect(r.reads.users).toBe(reads + 1);
    // The same while that reload is still under way (no second read piles up).
    expect(await r.directory.storage.users.findById('u1')).toMatchObject({ username: 'ann' });
    expect(r.reads.users).toBe(reads + 1);
    freeze.fail();
    expect(await r.directory.storage.users.findById('u1')).toMatchObject({ username: 'ann' });
  });

  it('a load still pending at a resync never takes the place of the answer known before it', async () => {
    await r.directory.storage.users.findById('u1');
    expect(await r.directory.resync()).toBe(true);
    const freeze = r.freeze();
    const pending = r.directory.storage.users.findById('u1');
    // The feed resyncs again while that load waits; then the load fails.
    r.down(true);
    expect(await r.directory.resync()).toBe(false);
    r.down(false);
    expect(await r.directory.resync()).toBe(true);
    freeze.fail();
    expect(await pending).toMatchObject({ username: 'ann' });
    r.down(true);
    r.available.value = false;
    expect(await r.directory.storage.users.findById('u1')).toMatchObject({ username: 'ann' });
  });
});

describe('cache.maxStaleness', () => {
  it('past the limit without hearing from the database, answers nothing from memory (503)', async () => {
    const r = await rig(300);
    expect((await r.directory.storage.users.findById('u1'))?.username).toBe('ann');
    r.down(true);
    r.clock.advance(299_000);
    expect(r.directory.stale).toBe(false);
    expect((await r.directory.storage.users.findById('u1'))?.username).toBe('ann');
    r.clock.advance(2_000);
    expect(r.directory.stale).toBe(true);
    expect(await rejection(r.directory.storage.users.findById('u1'))).toBeInstanceOf(StorageUnavailableError);
    expect(
      await rejection(r.directory.storage.revocations.isRevoked('jti', 'x', new Date(r.clock.now()))),
    ).toBeInstanceOf(StorageUnavailableError);
    // A token's user too: stale, the directory only passes the read on.
    await expect(r.directory.subject('u1', (id) => r.storage.users.findById(id))).rejects.toBeInstanceOf(
      StorageUnavailableError,
    );
    // The feed reads the log again: fresh, and answering from memory.
    r.down(false);
    r.synced();
    expect(r.directory.stale).toBe(false);
    expect((await r.directory.storage.users.findById('u1'))?.username).toBe('ann');
  });

  it('each successful read of the change log (onSynced) keeps the directory fresh', async () => {
    const r = await rig(60);
    for (let i = 0; i < 10; i++) {
      r.clock.advance(59_000);
      r.synced();
      expect(r.directory.stale).toBe(false);
    }
  });
});
