import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StorageUnavailableError } from '@idgate/core';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createSqlStorage, type Database, migrateToLatest, openDatabase } from '../../src/storage/index.js';
import { reportingUnavailability, storageUnavailability } from '../../src/storage/unavailable.js';
import { runInProcess, SECRET } from '../cli/support.js';
import { testDatabaseUrls } from '../helpers/databases.js';
import { newUser } from './fixtures.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => error,
  );
}

/** A migrated SQLite database, and another connection holding its write lock. */
async function lockedSqlite(): Promise<{ database: Database; url: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'idgate-busy-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const url = `sqlite:${join(dir, 'idgate.db')}`;
  const database = await openDatabase(url);
  cleanups.push(() => database.close());
  await migrateToLatest(database);
  const other = new SqliteDatabase(join(dir, 'idgate.db'));
  other.exec('BEGIN EXCLUSIVE');
  cleanups.push(() => {
    other.exec('ROLLBACK');
    other.close();
  });
  return { database, url };
}

describe('which driver errors mean the database cannot answer now', () => {
  it.each([
    ['SQLite busy', withCode('SQLITE_BUSY', 'database is locked'), 'busy'],
    ['SQLite busy (extended code)', withCode('SQLITE_BUSY_SNAPSHOT'), 'busy'],
    ['SQLite locked table', withCode('SQLITE_LOCKED'), 'busy'],
    ['connection refused', withCode('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432'), 'unreachable'],
    ['connection reset', withCode('ECONNRESET'), 'unreachable'],
    ['socket timeout', withCode('ETIMEDOUT'), 'timeout'],
    ['PostgreSQL connection failure (class 08)', withCode('08006'), 'unreachable'],
    ['PostgreSQL shutting down', withCode('57P01'), 'unreachable'],
    ['PostgreSQL starting up', withCode('57P03'), 'unreachable'],
    ['too many connections', withCode('53300'), 'busy'],
    ['statement timeout', withCode('57014'), 'timeout'],
    ['a connection pg dropped', new Error('Connection terminated unexpectedly'), 'unreachable'],
    ['a pool connect timeout', new Error('timeout exceeded when trying to connect'), 'timeout'],
  ])('%s: %s', (_name, error, expected) => {
    expect(storageUnavailability(error)).toBe(expected);
  });

  it.each([
    ['a unique violation', withCode('23505')],
    ['a SQLite constraint', withCode('SQLITE_CONSTRAINT_UNIQUE')],
    ['a missing table', withCode('42P01')],
    ['a syntax error', withCode('SQLITE_ERROR', 'near "selec": syntax error')],
    ['a bug', new TypeError('Cannot read properties of undefined')],
    ['not an error', 'ECONNREFUSED'],
  ])('not %s', (_name, error) => {
    expect(storageUnavailability(error)).toBeUndefined();
  });
});

describe('storage that cannot answer throws StorageUnavailableError', () => {
  it('SQLite: a write waiting out another connection’s lock', async () => {
    const { database } = await lockedSqlite();
    await sql`pragma busy_timeout = 50`.execute(database.db);
    const storage = createSqlStorage(database);
    const error = await rejection(storage.users.create(newUser({ username: 'alice' })));
    expect(error).toBeInstanceOf(StorageUnavailableError);
    expect((error as StorageUnavailableError).code).toBe('busy');
    expect((error as StorageUnavailableError).cause).toMatchObject({ code: 'SQLITE_BUSY' });
  });

  it('SQLite: reads go on, and other errors pass unchanged', async () => {
    const { database } = await lockedSqlite();
    const storage = createSqlStorage(database);
    expect(await storage.users.findByUsername('nobody')).toBeUndefined();
    const error = await rejection(sql`selec 1`.execute(database.db));
    expect(error).not.toBeInstanceOf(StorageUnavailableError);
    expect((error as { code?: string }).code).toBe('SQLITE_ERROR');
  });

  it('PostgreSQL: a server that refuses connections', async () => {
    const pool = new pg.Pool({ connectionString: 'postgres://idgate:hunter2@127.0.0.1:1/idgate' });
    const db = new Kysely({ dialect: reportingUnavailability(new PostgresDialect({ pool })) });
    cleanups.push(() => db.destroy());
    const error = await rejection(sql`select 1`.execute(db));
    expect(error).toBeInstanceOf(StorageUnavailableError);
    expect((error as StorageUnavailableError).code).toBe('unreachable');
    expect((error as StorageUnavailableError).description).not.toMatch(/ECONNREFUSED|hunter2|127\.0\.0\.1/);
  });

  const postgres = testDatabaseUrls().find((kind) => kind.name === 'postgres');
  it.skipIf(postgres === undefined)('PostgreSQL: a connection cut in the middle of a query', async () => {
    const created = await (postgres as NonNullable<typeof postgres>).create();
    cleanups.push(() => created.drop());
    const database = await openDatabase(created.url);
    cleanups.push(() => database.close());
    const pid = (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(database.db)).rows[0]
      ?.pid;
    const sleeping = rejection(sql`select pg_sleep(30)`.execute(database.db));
    const admin = new pg.Client({ connectionString: created.url });
    await admin.connect();
    try {
      // Wait until the sleep is running, then end that backend as a server shutdown would.
      for (let i = 0; i < 100; i++) {
        const active = await admin.query('select 1 from pg_stat_activity where pid = $1 and query like $2', [
          pid,
          '%pg_sleep%',
        ]);
        if (active.rowCount === 1) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await admin.query('select pg_terminate_backend($1)', [pid]);
    } finally {
      await admin.end();
    }
    const error = await sleeping;
    expect(error).toBeInstanceOf(StorageUnavailableError);
    expect((error as StorageUnavailableError).code).toBe('unreachable');
    // The process lives on, and once the pool has dropped the broken connection queries work again.
    await vi.waitFor(async () => {
      expect((await sql<{ one: number }>`select 1 as one`.execute(database.db)).rows).toEqual([{ one: 1 }]);
    });
  });
});

describe('the CLI on a database that cannot answer', () => {
  it('says so in one line, in the driver’s words', async () => {
    const { url } = await lockedSqlite();
    const result = await runInProcess(['users', 'add', 'alice', '--password-stdin'], {
      env: { IDGATE_DATABASE_URL: url, IDGATE_SECRET: SECRET },
      input: 'correct horse battery staple\n',
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('idgate: the database is unavailable: database is locked\n');
  }, 15_000);
});
