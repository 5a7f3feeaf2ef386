import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

/** A database made for one test (or one test file), and how to get rid of it. */
export interface TestDatabase {
  /** A URL `openDatabase` accepts. */
  url: string;
  /** Deletes the database; the caller must have closed its own connections first (PostgreSQL ones are cut anyway). */
  drop(): Promise<void>;
}

export interface TestDatabaseKind {
  name: 'sqlite' | 'postgres';
  /** Creates a fresh, empty database. */
  create(): Promise<TestDatabase>;
}

/**
 * The databases storage tests run against: SQLite always, PostgreSQL too when
 * `IDGATE_TEST_DATABASE_URL` names a server (a URL whose user may create databases).
 * @example
 * describe.each(testDatabaseUrls())('users on $name', ({ create }) => {
 *   let database: TestDatabase;
 *   beforeEach(async () => { database = await create(); });
 *   afterEach(async () => { await database.drop(); });
 * });
 */
export function testDatabaseUrls(): TestDatabaseKind[] {
  const kinds: TestDatabaseKind[] = [{ name: 'sqlite', create: createSqliteDatabase }];
  const serverUrl = process.env.IDGATE_TEST_DATABASE_URL;
  if (serverUrl !== undefined && serverUrl !== '') {
    kinds.push({ name: 'postgres', create: () => createPostgresDatabase(serverUrl) });
  }
  return kinds;
}

async function createSqliteDatabase(): Promise<TestDatabase> {
  const file = join(tmpdir(), `idgate-test-${randomBytes(8).toString('hex')}.db`);
  return {
    url: `sqlite:${file}`,
    async drop() {
      await Promise.all(['', '-wal', '-shm', '-journal'].map((suffix) => rm(file + suffix, { force: true })));
    },
  };
}

async function createPostgresDatabase(serverUrl: string): Promise<TestDatabase> {
  // Hex only, so the name needs no quoting rules beyond the double quotes below.
  const name = `idgate_t_${randomBytes(8).toString('hex')}`;
  await withAdminClient(serverUrl, (client) => client.query(`CREATE DATABASE "${name}"`));
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      await withAdminClient(serverUrl, async (client) => {
        await client.query(
          'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
          [name],
        );
        await client.query(`DROP DATABASE IF EXISTS "${name}"`);
      });
    },
  };
}

async function withAdminClient<T>(serverUrl: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}
