import { StorageUnavailableError } from '@idgate/core';
import type { StorageHealth } from './health.js';
import { storageUnavailability } from './unavailable.js';

/** A connection of the heartbeat's own, outside the pool that requests queue on. */
export interface HeartbeatConnection {
  /** A statement that costs the server nothing (`select 1`). */
  ping(): Promise<unknown>;
  /** Drops the connection at once: a frozen server never answers a polite goodbye. */
  destroy(): void;
}

/** What {@link startHeartbeat} probes with. */
export interface HeartbeatOptions {
  /** Told each answer (the storage is available) and each silence (it is not). */
  health: StorageHealth;
  /** Opens the heartbeat's connection (again after one was dropped). */
  connect(): Promise<HeartbeatConnection>;
  /** How long a ping (with the connecting, when there is none) may take: `database.heartbeatTimeout`. */
  timeoutMs: number;
  /** The pause between the end of one ping and the next (default {@link HEARTBEAT_INTERVAL_MS}). */
  intervalMs?: number;
}

/** A running heartbeat. */
export interface Heartbeat {
  /** Pings now (or joins the ping under way); resolves whether the database answered in time. */
  beat(): Promise<boolean>;
  /** Stops pinging and drops the connection. */
  stop(): void;
}

/**
 * The pause between pings (ms): a frozen database is noticed within this plus the timeout, and a
 * database that answers again within this (the half-open probe of the breaker).
 */
export const HEARTBEAT_INTERVAL_MS = 500;

/**
 * The circuit breaker's probe: `select 1` on a connection of its own, every
 * {@link HEARTBEAT_INTERVAL_MS}, bounded by `timeoutMs`. A ping that is not answered in time
 * turns `health` unavailable — which fails every query in flight and every new one at once (see
 * `StorageHealth.abandonOnOutage` and `reportingUnavailability`) instead of each waiting out the
 * query timeout — and drops the connection (the next ping opens another); the first ping answered
 * afterwards turns it available again. Requests never wait for a ping.
 * @example
 * const heartbeat = startHeartbeat({ health, timeoutMs: 1000, connect: async () => ({ ping: () => client.query('select 1'), destroy: () => void client.end() }) });
 * heartbeat.stop();
 */
export function startHeartbeat(options: HeartbeatOptions): Heartbeat {
  const { health, timeoutMs } = options;
  const intervalMs = options.intervalMs ?? HEARTBEAT_INTERVAL_MS;
  let connection: Promise<HeartbeatConnection> | undefined;
  let running: Promise<boolean> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;

  const drop = () => {
    const dropped = connection;
    connection = undefined;
    dropped?.then(
      (open) => open.destroy(),
      () => undefined,
    );
  };

  const ping = async (): Promise<boolean> => {
    let deadline: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      // Past the timeout, an answer already on the socket is read first (the poll phase runs
      // before setImmediate's): an event loop that was busy is not a silent database.
      deadline = setTimeout(() => setImmediate(() => resolve('late')), timeoutMs);
    });
    try {
      connection ??= options.connect();
      const answered = connection.then((open) => open.ping()).then(() => 'answered' as const);
      // Given up on, it still settles later (or never, frozen): its failure is not unhandled.
      answered.catch(() => undefined);
      if ((await Promise.race([answered, late])) === 'late') {
        drop();
        health.failed(
          new StorageUnavailableError('timeout', {
            cause: new Error(`no answer to the heartbeat within ${timeoutMs} ms`),
          }),
        );
        return false;
      }
      health.succeeded();
      return true;
    } catch (error) {
      drop();
      health.failed(
        new StorageUnavailableError(storageUnavailability(error) ?? 'unreachable', { cause: error }),
      );
      return false;
    } finally {
      clearTimeout(deadline);
    }
  };

  const beat = (): Promise<boolean> => {
    running ??= ping().finally(() => {
      running = undefined;
    });
    return running;
  };

  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      void beat().then(schedule);
    }, intervalMs);
    // The server's listening socket keeps the process alive; a CLI run must not wait for a ping.
    timer.unref();
  };
  schedule();

  return {
    beat,
    stop() {
      stopped = true;
      clearTimeout(timer);
      drop();
    },
  };
}
