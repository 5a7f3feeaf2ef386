/**
 * `@idgate/core/testing`: in-memory implementations of core's ports, for tests and for trying
 * idgate's logic without a database. Not for production: nothing here persists, and the password
 * hasher is deliberately weak.
 * @example
 * import { createMemoryStorage, insecureTestPasswordHasher } from '@idgate/core/testing';
 * const storage = createMemoryStorage();
 */
export { createMemoryStorage, insecureTestPasswordHasher } from './ports/memory.js';
