import type { Storage } from '../../ports/storage.js';

/** The storage of the running test (valid inside tests only). */
export type StorageUnderTest = () => Storage;
