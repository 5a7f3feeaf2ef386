import { describe, expect, it } from 'vitest';
import { at } from './records.js';
import type { StorageUnderTest } from './subject.js';

const NOON = at('2026-01-01T12:00:00.000Z');

/** Which declaration manager owns which object (`idgate apply`). */
export function declarationsContract(subject: StorageUnderTest): void {
  describe('declared objects', () => {
    it('records an owner per kind and name, replaces it, lists by kind then name, and forgets it', async () => {
      const storage = subject();
      const record = {
        kind: 'user' as const,
        name: 'alice',
        objectId: 'alice',
        manager: 'apply',
        secrets: null,
        appliedHash: 'h1',
        appliedAt: NOON,
      };
      await storage.declaredObjects.put(record);
      await storage.declaredObjects.put({
        ...record,
        kind: 'api-key',
        name: 'hook',
        objectId: 'k1',
        secrets: 's',
      });
      await storage.declaredObjects.put({ ...record, kind: 'client', name: 'web', objectId: 'web' });
      await storage.declaredObjects.put({ ...record, appliedHash: 'h2', manager: 'team-b' });
      expect(await storage.declaredObjects.list()).toEqual([
        { ...record, kind: 'api-key', name: 'hook', objectId: 'k1', secrets: 's' },
        { ...record, kind: 'client', name: 'web', objectId: 'web' },
        { ...record, appliedHash: 'h2', manager: 'team-b' },
      ]);
      expect(await storage.declaredObjects.remove('user', 'alice')).toBe(true);
      expect(await storage.declaredObjects.remove('user', 'alice')).toBe(false);
      expect((await storage.declaredObjects.list()).map((r) => r.name)).toEqual(['hook', 'web']);
    });

    it('rolls back with the transaction that wrote it', async () => {
      const storage = subject();
      await expect(
        storage.transaction(async (tx) => {
          await tx.declaredObjects.put({
            kind: 'cluster',
            name: 'prod',
            objectId: 'prod',
            manager: 'apply',
            secrets: null,
            appliedHash: 'h',
            appliedAt: NOON,
          });
          throw new Error('rolled back');
        }),
      ).rejects.toThrow('rolled back');
      expect(await storage.declaredObjects.list()).toEqual([]);
    });
  });
}
