import { describe, expect, it } from 'vitest';
import { testDatabaseUrls } from '../helpers/databases.js';
import { newUser, useStorage } from './fixtures.js';

// What every storage does with users is core's storage contract (contract.test.ts); this is SQL's own.
describe.each(testDatabaseUrls())('users on $name', (kind) => {
  const fixture = useStorage(kind);

  it('refuses an Invalid Date instead of storing it', async () => {
    const { storage } = fixture();
    await expect(storage.users.create(newUser({ createdAt: new Date(Number.NaN) }))).rejects.toThrow(
      TypeError,
    );
  });
});
