import { describeStorageContract } from '../src/testing/contract/index.js';
import { createMemoryStorage } from '../src/testing.js';

describeStorageContract('the in-memory ports', () => createMemoryStorage());
