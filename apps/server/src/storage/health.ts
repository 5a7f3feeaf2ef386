import type { StorageUnavailability, StorageUnavailableError } from '@idgate/core';

/** Where {@link StorageHealth} writes its two lines (a pino logger is one). */
export interface HealthLogger {
  warn(fields: object, message: string): void;
  info(fields: object, message: string): void;
}

/**
 * Whether `cause` is an error the PostgreSQL server itself sent (a SQLSTATE) other than about the
 * connection (class 08) or the server going away (57P0x): the server is alive.
 */
function serverAnswered(cause: unknown): boolean {
  const code = (cause as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && !/^(08|57P0)/.test(code);
}

/** How often a database that stays busy (locked) is logged at most. */
const BUSY_LOG_INTERVAL_MS = 60_000;

/** What the storage is doing now: answering, or not since `since` (epoch ms) for `reason`. */
export type StorageState =
  | { readonly available: true }
  | { readonly available: false; readonly since: number; readonly reason: StorageUnavailability };

/**
 * Whether the database answers, as the queries going through it tell: the first query that fails
 * because the database cannot answer (unreachable, or too slow) turns it unavailable, the first one that succeeds after
 * that turns it available again. Each turn is logged once — a warning `storage unavailable` with
 * the reason and the driver's error, then `storage available again` with the outage's length —
 * rather than once per failed request.
 * @example
 * const health = new StorageHealth();
 * health.logTo(app.log);
 * health.failed(error); // logs "storage unavailable" once
 * health.succeeded(); // logs "storage available again" with outageMs
 */
export class StorageHealth {
  #state: StorageState = { available: true };
  #logger: HealthLogger | undefined;
  readonly #now: () => number;
  #busyLoggedAt: number | undefined;
  #busyUnlogged = 0;
  /** What waits on the database now and gives up when it turns unavailable (see {@link abandonOnOutage}). */
  readonly #waiting = new Set<(error: StorageUnavailableError) => void>();

  constructor(options: { now?: () => number } = {}) {
    this.#now = options.now ?? Date.now;
  }

  /** Where the next turns are logged (until then they are not). */
  logTo(logger: HealthLogger): void {
    this.#logger = logger;
  }

  get state(): StorageState {
    return this.#state;
  }

  get available(): boolean {
    return this.#state.available;
  }

  /**
   * Calls `abandon` with the error that turns the storage unavailable, if it does before the
   * returned function is called (the wait ended on its own): a query or a wait for a pooled
   * connection then answers at once instead of waiting out its own timeout on a database that
   * is known not to answer. A Set, not a promise raced against: a race with a promise that
   * settles only at the next outage would keep a reaction per query until then.
   * @example const done = health.abandonOnOutage((error) => reject(error)); query.finally(done);
   */
  abandonOnOutage(abandon: (error: StorageUnavailableError) => void): () => void {
    this.#waiting.add(abandon);
    return () => this.#waiting.delete(abandon);
  }

  /**
   * A query failed because the database cannot answer. Returns whether this was logged (to
   * `logger` when given, e.g. a request's logger): the first failure of an outage turns the
   * storage unavailable and is logged; a `busy` database (locked, out of connections), or a
   * PostgreSQL server that answered with an error of its own (a statement cancelled by
   * `statement_timeout`), still answers other queries, so it turns nothing and is logged at most
   * once a minute as `storage busy`, with how many such failures were not logged since.
   */
  failed(error: StorageUnavailableError, logger: HealthLogger | undefined = this.#logger): boolean {
    // The driver's words (a refused connection, a timeout), without a stack: one line, readable.
    const cause = error.cause instanceof Error ? error.cause.message : String(error.cause ?? error.message);
    if (error.code === 'busy' || serverAnswered(error.cause)) {
      const now = this.#now();
      if (this.#busyLoggedAt !== undefined && now - this.#busyLoggedAt < BUSY_LOG_INTERVAL_MS) {
        this.#busyUnlogged++;
        return false;
      }
      logger?.warn({ reason: error.code, cause, unlogged: this.#busyUnlogged }, 'storage busy');
      this.#busyLoggedAt = now;
      this.#busyUnlogged = 0;
      return true;
    }
    if (!this.#state.available) return false;
    this.#state = { available: false, since: this.#now(), reason: error.code };
    logger?.warn({ reason: error.code, cause }, 'storage unavailable');
    const waiting = [...this.#waiting];
    this.#waiting.clear();
    for (const abandon of waiting) abandon(error);
    return true;
  }

  /** A query succeeded. Returns whether this turned the storage available again (and was logged). */
  succeeded(): boolean {
    const state = this.#state;
    if (state.available) return false;
    this.#state = { available: true };
    this.#logger?.info(
      { outageMs: this.#now() - state.since, reason: state.reason },
      'storage available again',
    );
    return true;
  }
}
