import { type StorageUnavailability, StorageUnavailableError } from '@idgate/core';
import type {
  CompiledQuery,
  DatabaseConnection,
  Dialect,
  Driver,
  QueryResult,
  TransactionSettings,
} from 'kysely';
import type { StorageHealth } from './health.js';

// Node's socket errors on the way to PostgreSQL.
const SOCKET_ERRORS: Record<string, StorageUnavailability> = {
  ECONNREFUSED: 'unreachable',
  ECONNRESET: 'unreachable',
  ECONNABORTED: 'unreachable',
  EPIPE: 'unreachable',
  EHOSTUNREACH: 'unreachable',
  EHOSTDOWN: 'unreachable',
  ENETUNREACH: 'unreachable',
  ENETDOWN: 'unreachable',
  EADDRNOTAVAIL: 'unreachable',
  ENOTFOUND: 'unreachable',
  EAI_AGAIN: 'unreachable',
  ETIMEDOUT: 'timeout',
};

// PostgreSQL SQLSTATEs that say "not now" rather than "not this" (class 08 is handled as a class).
const SQLSTATES: Record<string, StorageUnavailability> = {
  '57P01': 'unreachable', // admin_shutdown
  '57P02': 'unreachable', // crash_shutdown
  '57P03': 'unreachable', // cannot_connect_now (starting up, in recovery)
  '57P05': 'unreachable', // idle_session_timeout
  '53000': 'busy', // insufficient_resources
  '53100': 'busy', // disk_full
  '53200': 'busy', // out_of_memory
  '53300': 'busy', // too_many_connections
  '55P03': 'busy', // lock_not_available
  '40001': 'busy', // serialization_failure
  '40P01': 'busy', // deadlock_detected
  '58000': 'unreachable', // system_error
  '58030': 'unreachable', // io_error
  '57014': 'timeout', // query_canceled: statement_timeout, lock_timeout
  '25P03': 'timeout', // idle_in_transaction_session_timeout
  '25P04': 'timeout', // transaction_timeout (PostgreSQL 17)
};

// SQLite result codes (with their extended codes, SQLITE_IOERR_WRITE and the like) by prefix.
const SQLITE_CODES: [string, StorageUnavailability][] = [
  ['SQLITE_BUSY', 'busy'],
  ['SQLITE_LOCKED', 'busy'],
  ['SQLITE_FULL', 'busy'],
  ['SQLITE_NOMEM', 'busy'],
  ['SQLITE_IOERR', 'unreachable'],
  ['SQLITE_CANTOPEN', 'unreachable'],
  ['SQLITE_PROTOCOL', 'unreachable'],
];

// node-postgres says these without a code.
const PG_MESSAGES: [RegExp, StorageUnavailability][] = [
  [/^Connection terminated due to connection timeout/, 'timeout'],
  [/^timeout exceeded when trying to connect/, 'timeout'],
  [/^Query read timeout/, 'timeout'],
  [/^Connection terminated/, 'unreachable'],
  [/^Client has encountered a connection error and is not queryable/, 'unreachable'],
  [/^Client was closed and is not queryable/, 'unreachable'],
];

/**
 * Whether a driver's error means the database cannot answer right now (down, restarting, locked,
 * out of connections, too slow) rather than that this query is wrong; and which of those.
 * @example storageUnavailability(Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' })) // 'busy'
 */
export function storageUnavailability(error: unknown): StorageUnavailability | undefined {
  if (!(error instanceof Error)) return undefined;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    // SQLITE_BUSY with its extended codes (SQLITE_BUSY_SNAPSHOT, …), and the others likewise.
    if (code.startsWith('SQLITE_')) return SQLITE_CODES.find(([prefix]) => code.startsWith(prefix))?.[1];
    if (code in SOCKET_ERRORS) return SOCKET_ERRORS[code];
    if (code in SQLSTATES) return SQLSTATES[code];
    if (/^08[0-9A-Z]{3}$/.test(code)) return 'unreachable';
  }
  return PG_MESSAGES.find(([pattern]) => pattern.test(error.message))?.[1];
}

/** Throws `error`, as a StorageUnavailableError when it is one (and tells `health`). */
function classifier(health: StorageHealth | undefined): (error: unknown) => never {
  return (error) => {
    const code = storageUnavailability(error);
    if (code === undefined) throw error;
    const unavailable = new StorageUnavailableError(code, { cause: error });
    health?.failed(unavailable);
    throw unavailable;
  };
}

/** Runs driver calls, turning their errors into StorageUnavailableErrors where they mean that. */
function guard(health: StorageHealth | undefined) {
  const classified = classifier(health);
  const succeeded = <T>(value: T): T => {
    health?.succeeded();
    return value;
  };
  // better-sqlite3 throws synchronously from inside Kysely's promise-returning methods.
  return <T>(work: () => Promise<T>): Promise<T> => {
    try {
      return work().then(succeeded, classified);
    } catch (error) {
      return classified(error);
    }
  };
}

class ClassifyingConnection implements DatabaseConnection {
  constructor(
    readonly inner: DatabaseConnection,
    private readonly guarded: ReturnType<typeof guard>,
    private readonly classified: (error: unknown) => never,
  ) {}

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    return this.guarded(() => this.inner.executeQuery<R>(query));
  }

  async *streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    try {
      yield* this.inner.streamQuery<R>(query, chunkSize);
    } catch (error) {
      this.classified(error);
    }
  }
}

const inner = (connection: DatabaseConnection) => (connection as ClassifyingConnection).inner;

/** What {@link reportingUnavailability} does besides classifying. */
export interface ReportingOptions {
  /**
   * While `health` says the database is away, let one connection attempt at a time through (the
   * probe that notices the database is back) and answer the others unavailable at once, instead
   * of each waiting out the connect timeout and piling connection attempts on a frozen server.
   * For a connection pool (PostgreSQL), not for SQLite's single connection.
   */
  oneProbeWhileDown?: boolean;
  /**
   * While `health` says the database is away, answer every connection attempt unavailable at
   * once: a heartbeat of its own (see `startHeartbeat`) finds out when it is back. Takes the place
   * of {@link oneProbeWhileDown}, whose probe is a request left waiting on a frozen server.
   */
  failFastWhileDown?: boolean;
}

function classifyingDriver(
  driver: Driver,
  health: StorageHealth | undefined,
  options: ReportingOptions,
): Driver {
  const guarded = guard(health);
  const classified = classifier(health);
  let probing = false;
  const acquire = () => {
    if (health === undefined || !(options.oneProbeWhileDown || options.failFastWhileDown))
      return guarded(() => driver.acquireConnection());
    const state = health.state;
    if (state.available) return guarded(() => driver.acquireConnection());
    if (options.failFastWhileDown)
      return Promise.reject(
        new StorageUnavailableError(state.reason, {
          cause: new Error('storage unavailable: the heartbeat has not heard from the database since'),
        }),
      );
    if (probing)
      return Promise.reject(
        new StorageUnavailableError(state.reason, {
          cause: new Error(
            'storage unavailable: another connection attempt is finding out whether it is back',
          ),
        }),
      );
    probing = true;
    return guarded(() => driver.acquireConnection()).finally(() => {
      probing = false;
    });
  };
  const wrapped: Driver = {
    init: () => guarded(() => driver.init()),
    acquireConnection: () =>
      acquire().then((connection) => new ClassifyingConnection(connection, guarded, classified)),
    beginTransaction: (connection: DatabaseConnection, settings: TransactionSettings) =>
      guarded(() => driver.beginTransaction(inner(connection), settings)),
    commitTransaction: (connection) => guarded(() => driver.commitTransaction(inner(connection))),
    rollbackTransaction: (connection) => guarded(() => driver.rollbackTransaction(inner(connection))),
    releaseConnection: (connection) => driver.releaseConnection(inner(connection)),
    destroy: () => driver.destroy(),
  };
  // Optional in Kysely's contract: offered only when the driver offers them.
  const { savepoint, rollbackToSavepoint, releaseSavepoint } = driver;
  if (savepoint !== undefined)
    wrapped.savepoint = (connection, name, compile) =>
      guarded(() => savepoint.call(driver, inner(connection), name, compile));
  if (rollbackToSavepoint !== undefined)
    wrapped.rollbackToSavepoint = (connection, name, compile) =>
      guarded(() => rollbackToSavepoint.call(driver, inner(connection), name, compile));
  if (releaseSavepoint !== undefined)
    wrapped.releaseSavepoint = (connection, name, compile) =>
      guarded(() => releaseSavepoint.call(driver, inner(connection), name, compile));
  return wrapped;
}

/**
 * `dialect`, with every driver error that means "the database cannot answer right now" thrown as
 * a {@link StorageUnavailableError} (its cause the driver's error), so that the HTTP layer answers
 * 503 with `Retry-After` instead of a 500. Other errors pass unchanged. With `health`, every
 * such error and every success after one is told to it (see {@link StorageHealth}).
 * @example new Kysely<Schema>({ dialect: reportingUnavailability(new SqliteDialect({ database }), health) })
 */
export function reportingUnavailability(
  dialect: Dialect,
  health?: StorageHealth,
  options: ReportingOptions = {},
): Dialect {
  return {
    createDriver: () => classifyingDriver(dialect.createDriver(), health, options),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createAdapter: () => dialect.createAdapter(),
    createIntrospector: (db) => dialect.createIntrospector(db),
  };
}
