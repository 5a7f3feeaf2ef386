import { newIdentityProvider } from '@idgate/core/testing';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { testDatabaseUrls } from '../helpers/databases.js';
import { useStorage } from './fixtures.js';

// What every storage does with identity providers is core's storage contract (contract.test.ts);
// these check the table underneath.
describe.each(testDatabaseUrls())('identity providers on $name', (kind) => {
  const fixture = useStorage(kind);

  it('stores the name lower-cased', async () => {
    const { database, storage } = fixture();
    await storage.identityProviders.create(newIdentityProvider({ name: 'Corp-SSO', type: 'oidc' }));
    expect(await database.db.selectFrom('identity_providers').select('name').execute()).toEqual([
      { name: 'corp-sso' },
    ]);
  });

  it('has the table hold names lower-cased', async () => {
    const { database } = fixture();
    const insert = sql`insert into identity_providers (name, type, config, disabled, created_at, updated_at)
      values ('GitHub', 'github', '{}', 0, 0, 0)`.execute(database.db);
    await expect(insert).rejects.toThrow();
  });
});
