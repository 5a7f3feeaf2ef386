/**
 * `@idgate/core/testing`: in-memory implementations of core's ports, for tests and for trying
 * idgate's logic without a database. Not for production: nothing here persists, the password
 * hasher is deliberately weak and the seeded random source is predictable.
 * @example
 * import { createMemoryStorage, insecureTestPasswordHasher, seededRandom } from '@idgate/core/testing';
 * const storage = createMemoryStorage();
 *
 * It also holds the records the storage contract stores (`newUser`, `newClient`, …: every field
 * set), for tests of another storage.
 */
export { createMemoryStorage, insecureTestPasswordHasher } from './ports/memory.js';
export { seededRandom } from './ports/seeded-random.js';
export {
  at,
  newApiKey,
  newClient,
  newCode,
  newDevice,
  newGrant,
  newIdentityProvider,
  newInteraction,
  newLinkedIdentity,
  newLoginAttempt,
  newLoginTransaction,
  newRefreshToken,
  newSession,
  newSigningKey,
  newUpstream,
  newUser,
} from './testing/contract/records.js';
