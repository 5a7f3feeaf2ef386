import { existsSync, mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { StorageUnavailableError } from '@idgate/core';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import type { Schema } from './schema.js';
import { reportingUnavailability } from './unavailable.js';

export type DialectName = 'sqlite' | 'postgres';

/** An open database: the query builder, which dialect it speaks, and how to close it. */
export interface Database {
  readonly db: Kysely<Schema>;
  readonly dialect: DialectName;
  /** The connection pool behind a PostgreSQL database (for pool metrics); absent for SQLite. */
  readonly pool?: pg.Pool;
  /** Closes the connection(s); calling it again does nothing. */
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  /** Largest number of PostgreSQL connections in the pool (default 10). Ignored for SQLite. */
  poolMax?: number;
  /**
   * Open only a database idgate has already set up (its migration table exists): never create a
   * SQLite file or its folder. Throws {@link DatabaseNotFoundError} otherwise.
   */
  existing?: boolean;
}

/**
 * The database a URL names does not exist yet, or holds no idgate tables, and the caller asked
 * for an existing one. `location` is the SQLite file's absolute path or PostgreSQL's
 * `host:port/database` (never the password).
 */
export class DatabaseNotFoundError extends Error {
  override readonly name = 'DatabaseNotFoundError';
  constructor(
    readonly location: string,
    readonly reason: string,
  ) {
    super(`no idgate database at ${location}: ${reason}`);
  }
}

const ACCEPTED_FORMS =
  'sqlite:./relative/path.db, sqlite:/absolute/path.db, sqlite::memory:, postgres://… or postgresql://…';

/**
 * Opens the database a URL names:
 * `sqlite:./data/idgate.db` (relative to the working directory), `sqlite:/abs/path.db`, `sqlite::memory:`,
 * `postgres://user:pass@host:5432/db` or `postgresql://…`.
 * @throws Error for any other URL; the message never repeats the URL, which may hold a password.
 */
export async function openDatabase(url: string, options: OpenDatabaseOptions = {}): Promise<Database> {
  let database: Database;
  if (url.startsWith('sqlite:')) database = openSqlite(url.slice('sqlite:'.length), options);
  else if (url.startsWith('postgres://') || url.startsWith('postgresql://'))
    database = await openPostgres(url, options);
  else throw unsupported(url);
  if (options.existing === true && !(await hasIdgateSchema(database))) {
    await database.close();
    throw new DatabaseNotFoundError(
      database.dialect === 'sqlite' ? sqliteLocation(url.slice('sqlite:'.length)) : describeServer(url),
      database.dialect === 'sqlite'
        ? 'the file holds no idgate tables'
        : 'the PostgreSQL database holds no idgate tables',
    );
  }
  return database;
}

function unsupported(url: string): Error {
  // Only the scheme is named: the rest of the URL may hold credentials.
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(url)?.[1];
  const what =
    scheme === undefined ? 'a database URL without a scheme' : `the database URL scheme "${scheme}:"`;
  return new Error(`Unsupported database URL: idgate does not support ${what}. Use ${ACCEPTED_FORMS}`);
}

// Migrations record themselves in kysely_migration: its presence marks a database idgate set up.
async function hasIdgateSchema(database: Database): Promise<boolean> {
  if (database.dialect === 'sqlite') {
    const { rows } = await sql<{ n: number }>`
      select count(*) as n from sqlite_master where type = 'table' and name = 'kysely_migration'`.execute(
      database.db,
    );
    return Number(rows[0]?.n ?? 0) > 0;
  }
  const { rows } = await sql<{ found: boolean }>`
    select to_regclass('kysely_migration') is not null as found`.execute(database.db);
  return rows[0]?.found === true;
}

function sqliteLocation(location: string): string {
  return location === ':memory:' ? 'sqlite::memory:' : resolve(location);
}

function openSqlite(location: string, options: OpenDatabaseOptions): Database {
  if (location === '') throw new Error(`The SQLite database URL names no file. Use ${ACCEPTED_FORMS}`);
  // `sqlite://x` is ambiguous (host or path?); refuse it rather than guess where the data goes.
  if (location.startsWith('//')) {
    throw new Error(
      'A SQLite database URL takes a path, not a host: use sqlite:/absolute/path.db or sqlite:./relative/path.db',
    );
  }
  const memory = location === ':memory:';
  const file = memory ? ':memory:' : resolve(location);
  if (options.existing === true && !memory && !existsSync(file)) {
    throw new DatabaseNotFoundError(file, 'the file does not exist');
  }
  if (!memory) mkdirSync(dirname(file), { recursive: true });
  const sqlite = new SqliteDatabase(file, { fileMustExist: options.existing === true && !memory });
  try {
    // WAL lets readers proceed during a write; busy_timeout waits out short write locks instead of failing.
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('foreign_keys = ON');
    sqlite.pragma('busy_timeout = 5000');
    sqlite.pragma('synchronous = NORMAL');
  } catch (error) {
    sqlite.close();
    throw error;
  }
  const db = new Kysely<Schema>({
    dialect: reportingUnavailability(new SqliteDialect({ database: sqlite })),
  });
  return { db, dialect: 'sqlite', close: once(() => db.destroy()) };
}

async function openPostgres(url: string, options: OpenDatabaseOptions): Promise<Database> {
  // bigint (int8) holds epoch milliseconds and counts, all far below 2^53. The parser is set on this
  // pool only, so other pg users in the process keep the default (string) behaviour.
  const types = new pg.TypeOverrides();
  types.setTypeParser(20, 'text', parseInt8);
  const pool = new pg.Pool({ connectionString: url, max: options.poolMax ?? 10, types });
  // An idle connection that breaks (server restart) is dropped by the pool and the next query reconnects;
  // without a listener the 'error' event would crash the process.
  pool.on('error', () => {});
  // A connection that breaks while checked out (the server restarting mid-query) also emits
  // 'error', which the pool does not listen to then: the query's rejection carries the failure
  // (answered as unavailable storage), and the pool drops the connection when it comes back.
  pool.on('connect', (client) => client.on('error', () => {}));
  const db = new Kysely<Schema>({ dialect: reportingUnavailability(new PostgresDialect({ pool })) });
  try {
    // Fail at startup, not at the first request, when the server is unreachable or refuses us.
    await sql`select 1`.execute(db);
  } catch (error) {
    await db.destroy();
    // At startup the operator needs the driver's own words, not the answer a client would get.
    const cause = error instanceof StorageUnavailableError ? error.cause : error;
    const reason = cause instanceof Error ? cause.message : String(cause);
    throw new Error(`Cannot connect to PostgreSQL at ${describeServer(url)}: ${reason}`, { cause });
  }
  return { db, dialect: 'postgres', pool, close: once(() => db.destroy()) };
}

function parseInt8(value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n))
    throw new RangeError(`bigint value ${value} is outside the safe integer range`);
  return n;
}

/** host:port/database, without user or password. */
function describeServer(url: string): string {
  try {
    const u = new URL(url);
    return `${u.host}${u.pathname}`;
  } catch {
    return 'the configured URL';
  }
}

function once(fn: () => Promise<void>): () => Promise<void> {
  let done: Promise<void> | undefined;
  return () => {
    done ??= fn();
    return done;
  };
}
