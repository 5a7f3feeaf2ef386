import { generateSigningKey, type SigningKeyRecord } from '@idgate/core';
import { inject } from 'vitest';
import { migrateToLatest, openDatabase } from '../../src/storage/index.js';
import { createSqlStorage } from '../../src/storage/sql-storage.js';

/** A signing key as it crosses from the global setup to the test files (dates as ISO strings). */
export interface FixtureSigningKey {
  kid: string;
  alg: 'RS256';
  publicJwk: Record<string, unknown>;
  sealedPrivateJwk: string;
  createdAt: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    signingKey: FixtureSigningKey;
  }
}

/**
 * One RS256 key for the whole run, sealed with `secret` (the harness's): generating a 2048-bit RSA
 * key takes 100-500 ms of CPU, and every server the tests start on a fresh database would
 * otherwise make its own. Tests of key generation and rotation still generate real keys.
 */
export async function makeFixtureSigningKey(secret: string): Promise<FixtureSigningKey> {
  const record = await generateSigningKey('RS256', secret, new Date());
  return {
    kid: record.kid,
    alg: 'RS256',
    publicJwk: record.publicJwk,
    sealedPrivateJwk: record.sealedPrivateJwk,
    createdAt: record.createdAt.toISOString(),
  };
}

/**
 * Migrates the database at `url` and, when it holds no signing key yet, stores the run's fixture
 * key in it as the active key, so that the server composed over it finds a key instead of
 * generating one at first start. Answers false (and stores nothing) when the database has keys,
 * the run has no fixture key or the key would be younger than `now` (a test clock set in the past).
 */
export async function seedFixtureSigningKey(url: string, now: number): Promise<boolean> {
  const key = inject('signingKey');
  if (key === undefined || Date.parse(key.createdAt) > now) return false;
  const database = await openDatabase(url);
  try {
    await migrateToLatest(database);
    const record: SigningKeyRecord = {
      ...key,
      createdAt: new Date(key.createdAt),
      retiredAt: null,
      publishedUntil: null,
    };
    const keys = createSqlStorage(database).signingKeys;
    // A test may start a second server over a database it kept: that one has its keys already.
    if ((await keys.list()).length > 0) return false;
    await keys.insert(record);
  } finally {
    await database.close();
  }
  return true;
}
