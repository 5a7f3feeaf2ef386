/**
 * `@idgate/core/testing/contract`: the contract of the {@link Storage} port, stated once as a vitest
 * suite and run against every implementation (the in-memory ports, SQLite, PostgreSQL, yours), as
 * Dex's `storage/conformance` does. It imports vitest, an optional peer dependency of
 * `@idgate/core`: only this entry needs it.
 * @example
 * import { describeStorageContract } from '@idgate/core/testing/contract';
 * import { createMemoryStorage } from '@idgate/core/testing';
 * describeStorageContract('memory', () => createMemoryStorage());
 */
import { beforeEach, describe } from 'vitest';
import type { Storage } from '../../ports/storage.js';
import { apiKeysContract } from './api-keys.js';
import { auditEventsContract } from './audit-events.js';
import { authorizationCodesContract } from './authorization-codes.js';
import { clientsContract } from './clients.js';
import { clustersContract } from './clusters.js';
import { declarationsContract } from './declarations.js';
import { deviceAuthorizationsContract } from './device-authorizations.js';
import { factorsContract } from './factors.js';
import { grantsContract } from './grants.js';
import { groupsContract } from './groups.js';
import { identityProvidersContract } from './identity-providers.js';
import { incidentContract } from './incident.js';
import { interactionsContract } from './interactions.js';
import { loginAttemptsContract } from './login-attempts.js';
import { loginTransactionsContract } from './login-transactions.js';
import { refreshTokensContract } from './refresh-tokens.js';
import { revocationsContract } from './revocations.js';
import { sessionsAndConsentsContract } from './sessions-consents.js';
import { signingKeysContract } from './signing-keys.js';
import { subjectTokenUsesContract } from './subject-token-uses.js';
import { transactionsContract } from './transactions.js';
import { userListingsContract } from './user-listings.js';
import { usersContract } from './users.js';

export type { StorageUnderTest } from './subject.js';

import type { StorageUnderTest } from './subject.js';

/**
 * Declares the storage contract as a vitest `describe` block named after `name`. `makeStorage` is
 * called before every test and must answer an empty storage; opening and dropping a database around
 * the block is the caller's (a `beforeAll`/`afterAll` outside this call), and so is closing it.
 * @example
 * describe.each(databases)('on $name', (kind) => {
 *   const fixture = useStorage(kind); // opens the database, empties it before each test
 *   describeStorageContract(kind.name, () => fixture().storage);
 * });
 */
export function describeStorageContract(name: string, makeStorage: () => Storage | Promise<Storage>): void {
  describe(`the storage contract on ${name}`, () => {
    let current: Storage | undefined;
    beforeEach(async () => {
      current = await makeStorage();
    });
    const subject: StorageUnderTest = () => {
      if (current === undefined) throw new Error('the storage under test is used outside a test');
      return current;
    };
    usersContract(subject);
    userListingsContract(subject);
    groupsContract(subject);
    clientsContract(subject);
    apiKeysContract(subject);
    clustersContract(subject);
    factorsContract(subject);
    signingKeysContract(subject);
    revocationsContract(subject);
    subjectTokenUsesContract(subject);
    grantsContract(subject);
    authorizationCodesContract(subject);
    refreshTokensContract(subject);
    sessionsAndConsentsContract(subject);
    interactionsContract(subject);
    deviceAuthorizationsContract(subject);
    loginAttemptsContract(subject);
    identityProvidersContract(subject);
    loginTransactionsContract(subject);
    auditEventsContract(subject);
    incidentContract(subject);
    declarationsContract(subject);
    transactionsContract(subject);
  });
}
