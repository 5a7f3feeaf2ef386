import { type StorageUnavailability, StorageUnavailableError } from '@idgate/core';
import type {
  CompiledQuery,
  DatabaseConnection,
  Dialect,
  Driver,
  QueryResult,
  TransactionSettings,
} from 'kysely';

// Node's socket errors on the way to PostgreSQL.
const SOCKET_ERRORS: Record<string, StorageUnavailability> = {
  ECONNREFUSED: 'unreachable',
  ECONNRESET: 'unreachable',
  EPIPE: 'unreachable',
  EHOSTUNREACH: 'unreachable',
  ENETUNREACH: 'unreachable',
  ENOTFOUND: 'unreachable',
  EAI_AGAIN: 'unreachable',
  ETIMEDOUT: 'timeout',
};

// PostgreSQL SQLSTATEs that say "not now" rather than "not this" (class 08 is handled as a class).
const SQLSTATES: Record<string, StorageUnavailability> = {
  '57P01': 'unreachable', // admin_shutdown
  '57P02': 'unreachable', // crash_shutdown
  '57P03': 'unreachable', // cannot_connect_now (starting up, in recovery)
  '53300': 'busy', // too_many_connections
  '55P03': 'busy', // lock_not_available
  '57014': 'timeout', // query_canceled: statement_timeout, lock_timeout
};

// node-postgres says these without a code.
const PG_MESSAGES: [RegExp, StorageUnavailability][] = [
  [/^Connection terminated due to connection timeout/, 'timeout'],
  [/^timeout exceeded when trying to connect/, 'timeout'],
  [/^Connection terminated/, 'unreachable'],
  [/^Client has encountered a connection error and is not queryable/, 'unreachable'],
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
    // SQLITE_BUSY with its extended codes (SQLITE_BUSY_SNAPSHOT, …), and SQLITE_LOCKED likewise.
    if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) return 'busy';
    if (code in SOCKET_ERRORS) return SOCKET_ERRORS[code];
    if (code in SQLSTATES) return SQLSTATES[code];
    if (/^08[0-9A-Z]{3}$/.test(code)) return 'unreachable';
  }
  return PG_MESSAGES.find(([pattern]) => pattern.test(error.message))?.[1];
}

function classified(error: unknown): never {
  const code = storageUnavailability(error);
  throw code === undefined ? error : new StorageUnavailableError(code, { cause: error });
}

// better-sqlite3 throws synchronously from inside Kysely's promise-returning methods.
function guarded<T>(work: () => Promise<T>): Promise<T> {
  try {
    return work().catch(classified);
  } catch (error) {
    return classified(error);
  }
}

class ClassifyingConnection implements DatabaseConnection {
  constructor(readonly inner: DatabaseConnection) {}

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    return guarded(() => this.inner.executeQuery<R>(query));
  }

  async *streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    try {
      yield* this.inner.streamQuery<R>(query, chunkSize);
    } catch (error) {
      classified(error);
    }
  }
}

const inner = (connection: DatabaseConnection) => (connection as ClassifyingConnection).inner;

function classifyingDriver(driver: Driver): Driver {
  const wrapped: Driver = {
    init: () => guarded(() => driver.init()),
    acquireConnection: () =>
      guarded(() => driver.acquireConnection()).then((connection) => new ClassifyingConnection(connection)),
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
 * 503 with `Retry-After` instead of a 500. Other errors pass unchanged.
 * @example new Kysely<Schema>({ dialect: reportingUnavailability(new SqliteDialect({ database })) })
 */
export function reportingUnavailability(dialect: Dialect): Dialect {
  return {
    createDriver: () => classifyingDriver(dialect.createDriver()),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createAdapter: () => dialect.createAdapter(),
    createIntrospector: (db) => dialect.createIntrospector(db),
  };
}
