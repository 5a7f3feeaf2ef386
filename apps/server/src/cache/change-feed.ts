import type pg from 'pg';
import type { Database } from '../storage/index.js';
import { CHANGE_CHANNEL, type ChangeTopic } from './change-log.js';

/** One change another process made. */
export interface Change {
  id: number;
  topic: ChangeTopic;
  key: string;
}

export interface ChangeFeedOptions {
  /** How often the log is read even without a notification (default 1 s). */
  pollIntervalMs?: number;
  /** How often everything cached is dropped and reloaded, whatever the feed said (default 60 s). */
  resyncIntervalMs?: number;
  /** The PostgreSQL URL to LISTEN on (the pool's connections cannot hold a LISTEN). */
  listenUrl?: string;
  /** Options of the LISTEN connection besides its URL: its timeouts and keepalive. */
  listenOptions?: pg.ClientConfig;
  onError?: (error: unknown, what: string) => void;
}

// Ids of concurrent transactions can commit out of order: each read looks back this far and
// skips what it has seen, so a late commit with a lower id is not lost.
const LOOK_BACK = 200;
const RETAIN_MS = 3_600_000;

/**
 * Reads the change log: every second (the mechanism on SQLite, a safety net on PostgreSQL) and,
 * on PostgreSQL, at once when NOTIFY says something changed. A lost LISTEN connection is
 * re-established with backoff. Every minute subscribers resync from scratch, so a change that
 * was somehow missed is stale for a minute at most.
 */
export class ChangeFeed {
  readonly #database: Database;
  readonly #options: ChangeFeedOptions;
  readonly #listeners = new Set<(changes: Change[]) => void>();
  readonly #resyncListeners = new Set<() => void>();
  readonly #syncListeners = new Set<() => void>();
  /** Whether the last read of the log failed (the database away). */
  #failing = false;
  readonly #seen = new Set<number>();
  #lastId = 0;
  #timers: NodeJS.Timeout[] = [];
  #polling: Promise<void> | undefined;
  #again = false;
  #listener: pg.Client | undefined;
  #stopped = false;
  #backoffMs = 500;

  constructor(database: Database, options: ChangeFeedOptions = {}) {
    this.#database = database;
    this.#options = options;
  }

  subscribe(listener: (changes: Change[]) => void): void {
    this.#listeners.add(listener);
  }

  onResync(listener: () => void): void {
    this.#resyncListeners.add(listener);
  }

  /**
   * `listener` runs after every read of the log that succeeded: what it was told is up to date
   * as of then. After reads that failed (an outage), the first success also resyncs subscribers,
   * whatever the log says: the outage may have outlasted the log's retention.
   */
  onSynced(listener: () => void): void {
    this.#syncListeners.add(listener);
  }

  async start(): Promise<void> {
    const row = await this.#database.db
      .selectFrom('change_log')
      .select((eb) => eb.fn.max('id').as('last'))
      .executeTakeFirst();
    this.#lastId = Number(row?.last ?? 0);
    const every = (ms: number, run: () => void) => {
      const timer = setInterval(run, ms);
      timer.unref();
      this.#timers.push(timer);
    };
    every(this.#options.pollIntervalMs ?? 1000, () => void this.poll());
    every(this.#options.resyncIntervalMs ?? 60_000, () => this.#resync());
    every(600_000, () => void this.#purge());
    if (this.#database.dialect === 'postgres' && this.#options.listenUrl !== undefined) await this.#listen();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    for (const timer of this.#timers) clearInterval(timer);
    this.#timers = [];
    await this.#listener?.end().catch(() => undefined);
    await this.#polling;
  }

  /** Reads what is new now (single flight: a call during a read makes it read again after). */
  poll(): Promise<void> {
    if (this.#polling !== undefined) {
      this.#again = true;
      return this.#polling;
    }
    this.#polling = (async () => {
      do {
        this.#again = false;
        await this.#read().then(
          () => {
            for (const listener of this.#syncListeners) listener();
            if (this.#failing) {
              this.#failing = false;
              this.#resync();
            }
          },
          (error: unknown) => {
            this.#failing = true;
            this.#options.onError?.(error, 'reading the change log');
          },
        );
      } while (this.#again && !this.#stopped);
    })().finally(() => {
      this.#polling = undefined;
    });
    return this.#polling;
  }

  async #read(): Promise<void> {
    const rows = await this.#database.db
      .selectFrom('change_log')
      .select(['id', 'topic', 'key'])
      .where('id', '>', Math.max(0, this.#lastId - LOOK_BACK))
      .orderBy('id')
      .limit(5000)
      .execute();
    const fresh: Change[] = [];
    for (const row of rows) {
      const id = Number(row.id);
      if (this.#seen.has(id)) continue;
      this.#seen.add(id);
      fresh.push({ id, topic: row.topic as ChangeTopic, key: row.key });
      if (id > this.#lastId) this.#lastId = id;
    }
    for (const id of this.#seen) if (id <= this.#lastId - LOOK_BACK) this.#seen.delete(id);
    if (fresh.length > 0) for (const listener of this.#listeners) listener(fresh);
  }

  #resync(): void {
    for (const listener of this.#resyncListeners) listener();
  }

  async #purge(): Promise<void> {
    await this.#database.db
      .deleteFrom('change_log')
      .where('created_at', '<', Date.now() - RETAIN_MS)
      .execute()
      .catch((error: unknown) => this.#options.onError?.(error, 'purging the change log'));
  }

  async #listen(): Promise<void> {
    if (this.#stopped) return;
    // Only PostgreSQL listens, and only it needs the driver (SQLite processes never load it).
    const { default: pg } = await import('pg');
    if (this.#stopped) return;
    const client = new pg.Client({
      ...this.#options.listenOptions,
      connectionString: this.#options.listenUrl,
    });
    client.on('notification', () => void this.poll());
    client.on('error', (error) => {
      this.#options.onError?.(error, 'listening for changes');
      void client.end().catch(() => undefined);
      this.#reconnect();
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANGE_CHANNEL}`);
      this.#listener = client;
      this.#backoffMs = 500;
      // Anything written while we were not listening.
      void this.poll();
      this.#resync();
    } catch (error) {
      this.#options.onError?.(error, 'listening for changes');
      await client.end().catch(() => undefined);
      this.#reconnect();
    }
  }

  #reconnect(): void {
    if (this.#stopped) return;
    const delay = this.#backoffMs;
    this.#backoffMs = Math.min(this.#backoffMs * 2, 10_000);
    const timer = setTimeout(() => void this.#listen(), delay);
    timer.unref();
  }
}
