import { describe, expect, it } from 'vitest';
import { StorageUnavailableError } from '../../src/ports/storage.js';
import { createMemoryStorage } from '../../src/testing.js';
import { groupSpends, type SpendBatchStorage } from '../../src/trusts/spent.js';

const now = new Date('2026-11-27T00:00:00Z');
const use = (jti: string) => ({
  issuer: 'https://ci.example',
  jti,
  expiresAt: new Date(now.getTime() + 600_000),
});

/** Memory storage counting its transactions, whose next ones fail while `failing` is set. */
function countingStorage() {
  const storage = createMemoryStorage();
  const state = { transactions: 0, failing: undefined as Error | undefined };
  const counted: SpendBatchStorage = {
    transaction: (work) => {
      state.transactions++;
      if (state.failing !== undefined) return Promise.reject(state.failing);
      return storage.transaction((tx) => work(tx));
    },
  };
  return { storage, counted, state };
}

describe('groupSpends', () => {
  it('spends concurrent jtis in one transaction, each answered on its own, a jti once', async () => {
    const { counted, state } = countingStorage();
    const spend = groupSpends(counted);
    const answers = await Promise.all([
      spend(use('a'), now),
      spend(use('b'), now),
      spend(use('a'), now),
      spend(use('c'), now),
    ]);
    expect(answers).toEqual([true, true, false, true]);
    expect(state.transactions).toBe(1);
    // Spent for good: a later batch refuses them too.
    expect(await spend(use('b'), now)).toBe(false);
    expect(await spend(use('d'), now)).toBe(true);
    expect(state.transactions).toBe(3);
  });

  it('fails every spend of a batch the database refused, and spends nothing of it', async () => {
    const { counted, state } = countingStorage();
    const spend = groupSpends(counted);
    state.failing = new StorageUnavailableError('unreachable');
    const settled = await Promise.allSettled([spend(use('a'), now), spend(use('b'), now)]);
    expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected']);
    expect((settled[0] as PromiseRejectedResult).reason).toBeInstanceOf(StorageUnavailableError);
    state.failing = undefined;
    expect(await Promise.all([spend(use('a'), now), spend(use('b'), now)])).toEqual([true, true]);
  });

  it('keeps at most maxBatch spends in one transaction', async () => {
    const { counted, state } = countingStorage();
    const spend = groupSpends(counted, { maxBatch: 2 });
    const answers = await Promise.all(['a', 'b', 'c', 'd', 'e'].map((jti) => spend(use(jti), now)));
    expect(answers).toEqual([true, true, true, true, true]);
    expect(state.transactions).toBe(3);
  });
});
