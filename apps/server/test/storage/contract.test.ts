import { describeStorageContract } from '@idgate/core/testing/contract';
import { describe } from 'vitest';
import { testDatabaseUrls } from '../helpers/databases.js';
import { useStorage } from './fixtures.js';

// The repository contract core states once, on each database: a throwaway database per dialect,
// emptied before every test.
describe.each(testDatabaseUrls())('$name', (kind) => {
  const fixture = useStorage(kind);
  describeStorageContract(kind.name, () => fixture().storage);
});
