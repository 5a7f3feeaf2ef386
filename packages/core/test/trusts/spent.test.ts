import { describe, expect, it } from 'vitest';
import { completeAuditEvents } from '../../src/audit/record.js';
import { StorageUnavailableError } from '../../src/ports/storage.js';
import { createMemoryStorage } from '../../src/testing.js';
import { groupSpends, type SpendBatchStorage, spendAndRecord } from '../../src/trusts/spent.js';

const now = new Date('2026-11-27T00:00:00Z');
const clock = { now: () => now.getTime() };
const use = (jti: string) => ({
  issuer: 'https://ci.example',
  jti,
  expiresAt: new Date(now.getTime() + 600_000),
});
// The event each spend stores: what a token exchange records, its reason saying whether it was fresh.
const events = (jti: string) => (fresh: boolean) =>
  completeAuditEvents(
    [
      {
        type: 'token.exchanged',
        actor: { kind: 'client', id: null },
        outcome: fresh ? 'success' : 'failure',
        details: {
          trust: 'ci',
          issuer: 'https://ci.example',
          subject: 'repo:acme/infra',
          subjectJti: jti,
          run: {},
          cluster: 'prod',
          actor: null,
          jti: fresh ? `issued-${jti}` : null,
          lifetime: fresh ? 600 : null,
          reason: fresh ? null : 'replayed: subject_token was used already (its jti is spent)',
        },
      },
    ],
    clock,
  );

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
  const recorded = async () =>
    (await storage.auditEvents.list({ limit: 100 }))
      .map((event) => `${String((event.details as { subjectJti?: unknown }).subjectJti)} ${event.outcome}`)
      .sort();
  return { storage, counted, state, recorded };
}

describe('groupSpends', () => {
  it('spends concurrent jtis and stores their events in one transaction, each answered on its own, a jti once', async () => {
    const { counted, state, recorded } = countingStorage();
    const spend = groupSpends(counted);
    const answers = await Promise.all(['a', 'b', 'a', 'c'].map((jti) => spend(use(jti), now, events(jti))));
    expect(answers).toEqual([true, true, false, true]);
    expect(state.transactions).toBe(1);
    expect(await recorded()).toEqual(['a failure', 'a success', 'b success', 'c success']);
    // Spent for good: a later batch refuses them too.
    expect(await spend(use('b'), now, events('b'))).toBe(false);
    expect(await spend(use('d'), now, events('d'))).toBe(true);
    expect(state.transactions).toBe(3);
    expect(await recorded()).toContain('b failure');
  });

  it('fails every spend of a batch the database refused, and spends and records nothing of it', async () => {
    const { counted, state, recorded } = countingStorage();
    const spend = groupSpends(counted);
    state.failing = new StorageUnavailableError('unreachable');
    const settled = await Promise.allSettled([
      spend(use('a'), now, events('a')),
      spend(use('b'), now, events('b')),
    ]);
    expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected']);
    expect((settled[0] as PromiseRejectedResult).reason).toBeInstanceOf(StorageUnavailableError);
    expect(await recorded()).toEqual([]);
    state.failing = undefined;
    expect(await Promise.all([spend(use('a'), now, events('a')), spend(use('b'), now, events('b'))])).toEqual(
      [true, true],
    );
  });

  it('keeps at most maxBatch spends in one transaction', async () => {
    const { counted, state } = countingStorage();
    const spend = groupSpends(counted, { maxBatch: 2 });
    const answers = await Promise.all(
      ['a', 'b', 'c', 'd', 'e'].map((jti) => spend(use(jti), now, events(jti))),
    );
    expect(answers).toEqual([true, true, true, true, true]);
    expect(state.transactions).toBe(3);
  });
});

describe('spendAndRecord', () => {
  it('spends and records in a transaction of its own', async () => {
    const { counted, state, recorded } = countingStorage();
    const spend = spendAndRecord(counted);
    expect(await spend(use('a'), now, events('a'))).toBe(true);
    expect(await spend(use('a'), now, events('a'))).toBe(false);
    expect(state.transactions).toBe(2);
    expect(await recorded()).toEqual(['a failure', 'a success']);
  });
});
