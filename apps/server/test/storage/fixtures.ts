import type { Storage } from '@idgate/core';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { createSqlStorage, type Database, migrateToLatest, openDatabase } from '../../src/storage/index.js';
import { TABLES } from '../../src/storage/schema.js';
import type { TestDatabase, TestDatabaseKind } from '../helpers/databases.js';

export interface StorageFixture {
  database: Database;
  storage: Storage;
}

/**
 * One migrated database per describe block, emptied before every test.
 * @returns a getter, valid inside tests and hooks.
 */
export function useStorage(kind: TestDatabaseKind): () => StorageFixture {
  let created: TestDatabase | undefined;
  let fixture: StorageFixture | undefined;
  beforeAll(async () => {
    created = await kind.create();
    const database = await openDatabase(created.url);
    await migrateToLatest(database);
    fixture = { database, storage: createSqlStorage(database) };
  });
  beforeEach(async () => {
    const { db } = get().database;
    for (const table of TABLES) await db.deleteFrom(table).execute();
  });
  afterAll(async () => {
    await fixture?.storage.close();
    await created?.drop();
  });
  const get = () => {
    if (fixture === undefined) throw new Error('storage fixture used outside a test');
    return fixture;
  };
  return get;
}

// The records the storage contract stores, every field set (one source: core's contract suite).
export {
  at,
  newApiKey,
  newClient,
  newCode,
  newGrant,
  newInteraction,
  newRefreshToken,
  newSession,
  newUser,
} from '@idgate/core/testing';
