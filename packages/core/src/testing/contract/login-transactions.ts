import { describe, expect, it } from 'vitest';
import { StorageConflictError } from '../../ports/storage.js';
import { at, newLoginTransaction } from './records.js';
import type { StorageUnderTest } from './subject.js';

const CONSUMED_AT = at('2026-01-01T10:01:00.000Z');

export function loginTransactionsContract(subject: StorageUnderTest): void {
  describe('login transactions', () => {
    it('consumes a transaction once; every later presentation is a replay showing the first use', async () => {
      const storage = subject();
      await storage.loginTransactions.create(newLoginTransaction());
      expect(
        await storage.loginTransactions.consume(newLoginTransaction().stateHash, CONSUMED_AT),
      ).toStrictEqual({
        status: 'consumed',
        transaction: newLoginTransaction({ consumedAt: CONSUMED_AT }),
      });
      expect(
        await storage.loginTransactions.consume(
          newLoginTransaction().stateHash,
          at('2026-01-01T10:02:00.000Z'),
        ),
      ).toStrictEqual({
        status: 'replayed',
        transaction: newLoginTransaction({ consumedAt: CONSUMED_AT }),
      });
    });

    it('round-trips a transaction without an interaction', async () => {
      const storage = subject();
      const transaction = newLoginTransaction({ interactionId: null });
      await storage.loginTransactions.create(transaction);
      expect(await storage.loginTransactions.consume(transaction.stateHash, CONSUMED_AT)).toStrictEqual({
        status: 'consumed',
        transaction: { ...transaction, consumedAt: CONSUMED_AT },
      });
    });

    it('says unknown for a state it never stored', async () => {
      const storage = subject();
      expect(await storage.loginTransactions.consume('nope', CONSUMED_AT)).toStrictEqual({
        status: 'unknown',
      });
    });

    it('rejects a duplicate state hash with a stateHash conflict', async () => {
      const storage = subject();
      await storage.loginTransactions.create(newLoginTransaction());
      const attempt = storage.loginTransactions.create(newLoginTransaction({ provider: 'gitlab' }));
      await expect(attempt).rejects.toBeInstanceOf(StorageConflictError);
      await expect(attempt).rejects.toMatchObject({ field: 'stateHash' });
    });

    it('lets exactly one of many concurrent consumptions win', async () => {
      const storage = subject();
      await storage.loginTransactions.create(newLoginTransaction());
      const instants = Array.from({ length: 12 }, (_, i) => new Date(CONSUMED_AT.getTime() + i));
      const results = await Promise.all(
        instants.map((instant) =>
          storage.loginTransactions.consume(newLoginTransaction().stateHash, instant),
        ),
      );
      expect(results.filter((r) => r.status === 'consumed')).toHaveLength(1);
      expect(results.filter((r) => r.status === 'replayed')).toHaveLength(11);
      // Every caller sees the one winning instant.
      const consumedAt = results.map((r) =>
        r.status === 'unknown' ? null : r.transaction.consumedAt?.getTime(),
      );
      expect(new Set(consumedAt).size).toBe(1);
    });

    it('undoes a consumption when the surrounding transaction fails', async () => {
      const storage = subject();
      await storage.loginTransactions.create(newLoginTransaction());
      await expect(
        storage.transaction(async (tx) => {
          expect(
            (await tx.loginTransactions.consume(newLoginTransaction().stateHash, CONSUMED_AT)).status,
          ).toBe('consumed');
          throw new Error('token exchange failed');
        }),
      ).rejects.toThrow('token exchange failed');
      expect(
        (await storage.loginTransactions.consume(newLoginTransaction().stateHash, CONSUMED_AT)).status,
      ).toBe('consumed');
    });

    it('purges transactions that expired before now, and counts them', async () => {
      const storage = subject();
      const expiring = (stateHash: string, iso: string) =>
        storage.loginTransactions.create(newLoginTransaction({ stateHash, expiresAt: at(iso) }));
      await expiring('old', '2026-01-01T10:09:59.999Z');
      await expiring('edge', '2026-01-01T10:10:00.000Z');
      await expiring('live', '2026-01-01T10:15:00.000Z');
      const now = at('2026-01-01T10:10:00.000Z');
      expect(await storage.loginTransactions.purgeExpired(now)).toBe(1);
      expect(await storage.loginTransactions.purgeExpired(now)).toBe(0);
      expect((await storage.loginTransactions.consume('old', now)).status).toBe('unknown');
      expect((await storage.loginTransactions.consume('edge', now)).status).toBe('consumed');
      expect((await storage.loginTransactions.consume('live', now)).status).toBe('consumed');
    });
  });
}
