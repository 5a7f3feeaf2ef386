import { describe, expect, it } from 'vitest';
import { type Storage, StorageConflictError } from '../../ports/storage.js';
import {
  at,
  newApiKey,
  newClient,
  newCode,
  newGrant,
  newIdentityProvider,
  newLinkedIdentity,
  newLoginTransaction,
  newUser,
} from './records.js';
import type { StorageUnderTest } from './subject.js';

export function transactionsContract(subject: StorageUnderTest): void {
  describe('transactions', () => {
    it('commits every write and returns the result of work', async () => {
      const storage = subject();
      const result = await storage.transaction(async (tx) => {
        await tx.users.create(newUser());
        await tx.clients.create(newClient());
        // Reads inside the transaction see its own writes.
        return (await tx.users.findByUsername('ALICE'))?.id;
      });
      expect(result).toBe('u-alice');
      expect(await storage.users.count()).toBe(1);
      expect(await storage.clients.count()).toBe(1);
    });

    it('writes nothing when work throws, and rethrows the same error', async () => {
      const storage = subject();
      const boom = new Error('boom');
      const attempt = storage.transaction(async (tx) => {
        await tx.users.create(newUser());
        await tx.apiKeys.create(newApiKey());
        await tx.revocations.add({
          kind: 'jti',
          value: 'x',
          expiresAt: at('2099-01-01T00:00:00Z'),
          createdAt: new Date(),
        });
        throw boom;
      });
      await expect(attempt).rejects.toBe(boom);
      expect(await storage.users.count()).toBe(0);
      expect(await storage.apiKeys.count()).toBe(0);
      expect(await storage.revocations.listLive(at('2000-01-01T00:00:00Z'))).toEqual([]);
    });

    it('undoes updates too', async () => {
      const storage = subject();
      await storage.users.create(newUser());
      await expect(
        storage.transaction(async (tx) => {
          await tx.users.update('u-alice', { disabled: true, updatedAt: at('2026-05-05T00:00:00Z') });
          throw new Error('abort');
        }),
      ).rejects.toThrow('abort');
      expect(await storage.users.findById('u-alice')).toMatchObject({
        disabled: false,
        updatedAt: newUser().createdAt,
      });
    });

    it('undoes a redemption and the grant it made when the work fails', async () => {
      const storage = subject();
      await storage.authorizationCodes.create(newCode());
      const now = at('2026-01-01T10:00:30.000Z');
      await expect(
        storage.transaction(async (tx) => {
          expect((await tx.authorizationCodes.redeem(newCode().hash, now)).status).toBe('redeemed');
          await tx.authorizationCodes.openGrant(newCode().hash, newGrant());
          throw new Error('signing failed');
        }),
      ).rejects.toThrow('signing failed');
      expect(await storage.grants.findById('g-1')).toBeUndefined();
      expect(await storage.authorizationCodes.redeem(newCode().hash, now)).toStrictEqual({
        status: 'redeemed',
        code: newCode({ consumedAt: now }),
      });
    });

    it('runs a nested transaction inside the outer one', async () => {
      const storage = subject();
      let inner: Storage | undefined;
      let outer: Storage | undefined;
      await expect(
        storage.transaction(async (tx) => {
          outer = tx;
          await tx.transaction(async (nested) => {
            inner = nested;
            await nested.users.create(newUser());
          });
          throw new Error('outer fails');
        }),
      ).rejects.toThrow('outer fails');
      expect(inner).toBe(outer);
      expect(await storage.users.count()).toBe(0);
    });

    it('stays usable after a caught conflict inside the transaction', async () => {
      const storage = subject();
      await storage.users.create(newUser());
      await storage.transaction(async (tx) => {
        await tx.clients.create(newClient());
        await expect(tx.users.create(newUser({ id: 'u-2', username: 'ALICE' }))).rejects.toBeInstanceOf(
          StorageConflictError,
        );
        await tx.users.create(newUser({ id: 'u-3', username: 'alice2' }));
      });
      expect((await storage.users.list()).map((u) => u.username)).toEqual(['alice', 'alice2']);
      expect(await storage.clients.count()).toBe(1);
    });

    it('undoes federation writes of a failed transaction: a removal, a consumption, a creation', async () => {
      const storage = subject();
      await storage.identityProviders.create(newIdentityProvider());
      await storage.identities.link(newLinkedIdentity());
      await storage.loginTransactions.create(newLoginTransaction());
      const { stateHash, createdAt } = newLoginTransaction();
      await expect(
        storage.transaction(async (tx) => {
          await tx.identityProviders.remove('github');
          await tx.loginTransactions.consume(stateHash, createdAt);
          await tx.identityProviders.create(newIdentityProvider({ name: 'gitlab', type: 'gitlab' }));
          throw new Error('abort');
        }),
      ).rejects.toThrow('abort');
      expect((await storage.identityProviders.list()).map((p) => p.name)).toEqual(['github']);
      expect(await storage.identities.find('github', '583231')).toStrictEqual(newLinkedIdentity());
      expect((await storage.loginTransactions.consume(stateHash, createdAt)).status).toBe('consumed');
    });
  });
}
