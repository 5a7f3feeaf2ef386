import { type Attributes, SpanKind, type Tracer } from '@opentelemetry/api';
import type {
  CompiledQuery,
  DatabaseConnection,
  Dialect,
  Driver,
  QueryResult,
  TransactionSettings,
} from 'kysely';
import { childSpan, endFailed } from './child-span.js';

/** The database a dialect talks to, as the database semantic conventions name it. */
export interface QueryTarget {
  system: 'sqlite' | 'postgresql';
  /** The PostgreSQL database name, or the SQLite file. */
  namespace?: string;
  serverAddress?: string;
  serverPort?: number;
}

const OPERATIONS: Record<string, string> = {
  SelectQueryNode: 'SELECT',
  InsertQueryNode: 'INSERT',
  UpdateQueryNode: 'UPDATE',
  DeleteQueryNode: 'DELETE',
  MergeQueryNode: 'MERGE',
};

/** The table a statement reads or writes first, by its SQL (quoted or not). */
const COLLECTION = /\b(?:from|into|update|join)\s+"?([A-Za-z_][A-Za-z0-9_]*)"?/i;

function operationOf(query: CompiledQuery): string {
  const kind = OPERATIONS[query.query.kind];
  if (kind !== undefined) return kind;
  const word = /^\s*([A-Za-z]+)/.exec(query.sql)?.[1];
  return word === undefined ? 'QUERY' : word.toUpperCase();
}

class TracedConnection implements DatabaseConnection {
  constructor(
    readonly inner: DatabaseConnection,
    private readonly tracer: Tracer,
    private readonly target: Attributes,
  ) {}

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const operation = operationOf(query);
    const collection = COLLECTION.exec(query.sql)?.[1];
    // db.query.text is the statement with its placeholders: Kysely sends values as parameters,
    // which are never recorded.
    const child = childSpan(
      this.tracer,
      collection === undefined ? operation : `${operation} ${collection}`,
      SpanKind.CLIENT,
      {
        ...this.target,
        'db.operation.name': operation,
        ...(collection === undefined ? {} : { 'db.collection.name': collection }),
        'db.query.text': query.sql,
      },
    );
    if (child === undefined) return this.inner.executeQuery<R>(query);
    const { span } = child;
    let running: Promise<QueryResult<R>>;
    try {
      // better-sqlite3 throws synchronously from inside Kysely's promise-returning methods.
      running = this.inner.executeQuery<R>(query);
    } catch (error) {
      endFailed(span, error);
      throw error;
    }
    return running.then(
      (result) => {
        span.end();
        return result;
      },
      (error: unknown) => {
        endFailed(span, error);
        throw error;
      },
    );
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(query, chunkSize);
  }
}

const inner = (connection: DatabaseConnection) => (connection as TracedConnection).inner;

function tracingDriver(driver: Driver, tracer: Tracer, target: Attributes): Driver {
  // Transactions and savepoints are statements the driver sends through the connection it is
  // given: handing it the traced one gives BEGIN, COMMIT and ROLLBACK spans of their own.
  const wrapped: Driver = {
    init: () => driver.init(),
    acquireConnection: async () => new TracedConnection(await driver.acquireConnection(), tracer, target),
    beginTransaction: (connection: DatabaseConnection, settings: TransactionSettings) =>
      driver.beginTransaction(connection, settings),
    commitTransaction: (connection) => driver.commitTransaction(connection),
    rollbackTransaction: (connection) => driver.rollbackTransaction(connection),
    releaseConnection: (connection) => driver.releaseConnection(inner(connection)),
    destroy: () => driver.destroy(),
  };
  const { savepoint, rollbackToSavepoint, releaseSavepoint } = driver;
  if (savepoint !== undefined)
    wrapped.savepoint = (connection, name, compile) => savepoint.call(driver, connection, name, compile);
  if (rollbackToSavepoint !== undefined)
    wrapped.rollbackToSavepoint = (connection, name, compile) =>
      rollbackToSavepoint.call(driver, connection, name, compile);
  if (releaseSavepoint !== undefined)
    wrapped.releaseSavepoint = (connection, name, compile) =>
      releaseSavepoint.call(driver, connection, name, compile);
  return wrapped;
}

/**
 * `dialect`, with a client span per statement run inside a traced request (named
 * `{db.operation.name} {db.collection.name}`, with the database semantic conventions' attributes).
 * @example new Kysely<Schema>({ dialect: tracingQueries(new SqliteDialect({ database }), tracer, { system: 'sqlite' }) })
 */
export function tracingQueries(dialect: Dialect, tracer: Tracer, target: QueryTarget): Dialect {
  const attributes: Attributes = {
    'db.system.name': target.system,
    ...(target.namespace === undefined ? {} : { 'db.namespace': target.namespace }),
    ...(target.serverAddress === undefined ? {} : { 'server.address': target.serverAddress }),
    ...(target.serverPort === undefined ? {} : { 'server.port': target.serverPort }),
  };
  return {
    createDriver: () => tracingDriver(dialect.createDriver(), tracer, attributes),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createAdapter: () => dialect.createAdapter(),
    createIntrospector: (db) => dialect.createIntrospector(db),
  };
}
