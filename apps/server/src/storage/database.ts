import { existsSync, mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { StorageUnavailableError } from '@idgate/core';
import type { Tracer } from '@opentelemetry/api';
import SqliteDatabase from 'better-sqlite3';
import {
  Kysely,
  PostgresDialect,
  type PostgresPool,
  type PostgresPoolClient,
  SqliteDialect,
  sql,
} from 'kysely';
import type pg from 'pg';
import { type QueryTarget, tracingQueries } from '../telemetry/query-spans.js';
import { StorageHealth } from './health.js';
import { type HeartbeatConnection, startHeartbeat } from './heartbeat.js';
import type { Schema } from './schema.js';
import { cachingStatements } from './statement-cache.js';
import { reportingUnavailability, storageUnavailability } from './unavailable.js';

export type DialectName = 'sqlite' | 'postgres';

/** An open database: the query builder, which dialect it speaks, and how to close it. */
export interface Database {
  readonly db: Kysely<Schema>;
  readonly dialect: DialectName;
  /** The connection pool behind a PostgreSQL database (for pool metrics); absent for SQLite. */
  readonly pool?: pg.Pool;
  /** Whether the database answers now, as the queries through `db` tell (logged once per turn). */
  readonly health: StorageHealth;
  /** Closes the connection(s); calling it again does nothing. */
  close(): Promise<void>;
}

/**
 * How long to wait for the database before answering "unavailable", in seconds (fractions
 * allowed): the `database.*` settings.
 */
export interface OpenDatabaseOptions {
  /** Largest number of PostgreSQL connections in the pool (default 10). Ignored for SQLite. */
  poolMax?: number;
  /** Opening a PostgreSQL connection, or waiting for a free one in the pool (default 5). */
  connectTimeout?: number;
  /** PostgreSQL's `statement_timeout`: the server cancels a statement running longer (default 10). */
  statementTimeout?: number;
  /** The client gives up on a query the server does not answer at all, e.g. frozen (default 12). */
  queryTimeout?: number;
  /** PostgreSQL's `idle_in_transaction_session_timeout` (default 30). */
  idleInTransactionTimeout?: number;
  /** Seconds of silence before TCP keepalive probes a PostgreSQL connection; 0 for none (default 10). */
  keepAlive?: number;
  /** SQLite's `busy_timeout`: waiting for another connection's write lock (default 5). */
  busyTimeout?: number;
  /**
   * PostgreSQL: a `select 1` on a connection of its own every half second, which must answer
   * within `timeout` seconds (`database.heartbeatTimeout`); unanswered, the database counts as
   * away — queries in flight and new ones answer unavailable at once — until a ping answers
   * again. Absent (a CLI run, migrations): no heartbeat, and while the database is away one
   * connection attempt at a time is let through to find out whether it is back.
   */
  heartbeat?: { timeout: number } | undefined;
  /**
   * Open only a database idgate has already set up (its migration table exists): never create a
   * SQLite file or its folder. Throws {@link DatabaseNotFoundError} otherwise.
   */
  existing?: boolean;
  /** Traces every statement run inside a traced request (absent: no tracing, no cost). */
  tracer?: Tracer | undefined;
}

const ms = (seconds: number) => Math.max(1, Math.round(seconds * 1000));

/**
 * The options of `pg.Client` and `pg.Pool` that bound every wait on PostgreSQL: connecting, a
 * statement (server side), a query's answer (client side), an idle transaction, and keepalive.
 * @example new pg.Client({ connectionString: url, ...postgresTimeouts({ connectTimeout: 2 }) })
 */
export function postgresTimeouts(options: OpenDatabaseOptions = {}): pg.ClientConfig {
  const keepAlive = options.keepAlive ?? 10;
  return {
    connectionTimeoutMillis: ms(options.connectTimeout ?? 5),
    statement_timeout: ms(options.statementTimeout ?? 10),
    query_timeout: ms(options.queryTimeout ?? 12),
    idle_in_transaction_session_timeout: ms(options.idleInTransactionTimeout ?? 30),
    keepAlive: keepAlive > 0,
    ...(keepAlive > 0 ? { keepAliveInitialDelayMillis: ms(keepAlive) } : {}),
  };
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
    sqlite.pragma(`busy_timeout = ${ms(options.busyTimeout ?? 5)}`);
    sqlite.pragma('synchronous = NORMAL');
  } catch (error) {
    sqlite.close();
    throw error;
  }
  const health = new StorageHealth();
  const dialect = new SqliteDialect({ database: cachingStatements(sqlite) });
  const db = new Kysely<Schema>({
    dialect: reportingUnavailability(
      options.tracer === undefined
        ? dialect
        : tracingQueries(dialect, options.tracer, { system: 'sqlite', namespace: file }),
      health,
    ),
  });
  return { db, dialect: 'sqlite', health, close: once(() => db.destroy()) };
}

async function openPostgres(url: string, options: OpenDatabaseOptions): Promise<Database> {
  // Loaded here: the embedded SQLite default never needs the driver.
  const { default: pg } = await import('pg');
  // bigint (int8) holds epoch milliseconds and counts, all far below 2^53. The parser is set on this
  // pool only, so other pg users in the process keep the default (string) behaviour.
  const types = new pg.TypeOverrides();
  types.setTypeParser(20, 'text', parseInt8);
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolMax ?? 10,
    types,
    ...postgresTimeouts(options),
  });
  // An idle connection that breaks (server restart) is dropped by the pool and the next query reconnects;
  // without a listener the 'error' event would crash the process.
  pool.on('error', () => {});
  // A connection that breaks while checked out (the server restarting mid-query) also emits
  // 'error', which the pool does not listen to then: the query's rejection carries the failure
  // (answered as unavailable storage), and the pool drops the connection when it comes back.
  pool.on('connect', (client) => client.on('error', () => {}));
  const health = new StorageHealth();
  const heartbeatTimeout = options.heartbeat?.timeout ?? 0;
  const dialect = new PostgresDialect({ pool: droppingBrokenClients(pool, health) });
  const db = new Kysely<Schema>({
    dialect: reportingUnavailability(
      options.tracer === undefined ? dialect : tracingQueries(dialect, options.tracer, postgresTarget(url)),
      health,
      heartbeatTimeout > 0 ? { failFastWhileDown: true } : { oneProbeWhileDown: true },
    ),
  });
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
  const heartbeat =
    heartbeatTimeout > 0
      ? startHeartbeat({
          health,
          timeoutMs: ms(heartbeatTimeout),
          connect: () => heartbeatConnection(pg, url, ms(heartbeatTimeout), options),
        })
      : undefined;
  return {
    db,
    dialect: 'postgres',
    pool,
    health,
    close: once(() => {
      heartbeat?.stop();
      return db.destroy();
    }),
  };
}

/** A `pg.Client` of the heartbeat's own: connecting bounded by the heartbeat's timeout. */
async function heartbeatConnection(
  pg: typeof import('pg').default,
  url: string,
  timeoutMs: number,
  options: OpenDatabaseOptions,
): Promise<HeartbeatConnection> {
  const client = new pg.Client({
    connectionString: url,
    ...postgresTimeouts(options),
    connectionTimeoutMillis: timeoutMs,
    application_name: 'idgate heartbeat',
  });
  client.on('error', () => {});
  try {
    await client.connect();
  } catch (error) {
    void client.end().catch(() => undefined);
    throw error;
  }
  return {
    ping: () => client.query('select 1'),
    // With a query in flight pg destroys the socket rather than wait for the server's goodbye.
    destroy: () => void client.end().catch(() => undefined),
  };
}

/**
 * `pool` as Kysely uses it, except that
 * - a connection whose query failed for want of an answer (the client's query timeout, a broken
 *   socket) is destroyed when released instead of going back to the pool: a frozen server may
 *   still be working on that query, and the next one would queue behind it;
 * - when `health` turns unavailable (the heartbeat went unanswered), every query in flight and
 *   every wait for a pooled connection is abandoned at once with that error, the connections
 *   those queries ran on are destroyed when released (the pool opens fresh ones once the
 *   database answers again), and a query on such a connection (a transaction's ROLLBACK) is not
 *   sent: a request answers 503 in the time it takes to notice, not after the query timeout.
 */
function droppingBrokenClients(pool: pg.Pool, health: StorageHealth): PostgresPool {
  return {
    async connect() {
      const client = await abandonable(health, pool.connect(), (late) => late.release());
      let broken: Error | undefined;
      return {
        query: ((...args: unknown[]) => {
          if (broken instanceof StorageUnavailableError) return Promise.reject(broken);
          const result = (client.query as (...a: unknown[]) => unknown).apply(client, args);
          // A cursor (Kysely's streaming) is not a promise: it is read through the pool's client.
          if (!(result instanceof Promise)) return result;
          result.catch((error: unknown) => {
            const code = storageUnavailability(error);
            if (code === 'timeout' || code === 'unreachable') broken ??= error as Error;
          });
          return abandonable(health, result, undefined, (error) => {
            broken = error;
          });
        }) as PostgresPoolClient['query'],
        release: () => client.release(broken),
      };
    },
    end: () => pool.end(),
  };
}

/**
 * `work`, or a rejection with the error that turns `health` unavailable first. `late` gets what
 * `work` brings after it was given up on (a pooled connection to hand back); `abandoned` is told
 * when it is.
 */
function abandonable<T>(
  health: StorageHealth,
  work: Promise<T>,
  late?: (value: T) => void,
  abandoned?: (error: StorageUnavailableError) => void,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let given = false;
    const done = health.abandonOnOutage((error) => {
      given = true;
      abandoned?.(error);
      reject(error);
    });
    work.then(
      (value) => {
        done();
        if (given) late?.(value);
        else resolve(value);
      },
      (error: unknown) => {
        done();
        reject(error);
      },
    );
  });
}

function parseInt8(value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n))
    throw new RangeError(`bigint value ${value} is outside the safe integer range`);
  return n;
}

/** The server and database a PostgreSQL URL names, as span attributes (never the user or password). */
function postgresTarget(url: string): QueryTarget {
  try {
    const u = new URL(url);
    const database = decodeURIComponent(u.pathname.slice(1));
    return {
      system: 'postgresql',
      ...(database === '' ? {} : { namespace: database }),
      ...(u.hostname === '' ? {} : { serverAddress: u.hostname.replace(/^\[(.*)\]$/, '$1') }),
      serverPort: u.port === '' ? 5432 : Number(u.port),
    };
  } catch {
    return { system: 'postgresql' };
  }
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
