import { describe, expect, it } from 'vitest';
import { testDatabaseUrls } from '../helpers/databases.js';
import { useStorage } from './fixtures.js';

// What every storage's transactions do is core's storage contract (contract.test.ts); this is SQL's own.
describe.each(testDatabaseUrls())('transactions on $name', (kind) => {
  const fixture = useStorage(kind);

  it('refuses to close the database from inside a transaction', async () => {
    const { storage } = fixture();
    await storage.transaction(async (tx) => {
      await expect(tx.close()).rejects.toThrow('inside a transaction');
    });
    expect(await storage.users.count()).toBe(0);
  });
});
