import { StorageUnavailableError } from '@idgate/core';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { StorageHealth } from '../../src/storage/health.js';
import { HEARTBEAT_INTERVAL_MS, startHeartbeat } from '../../src/storage/heartbeat.js';

// The circuit breaker's probe, with fake connections and fake timers: a ping unanswered within
// the timeout opens the breaker (and abandons what waits on the database), the next one answered
// closes it. Real PostgreSQL frozen under a server: test/reliability/db-frozen.test.ts.

interface FakeServer {
  /** Whether pings are answered (false: they never settle, as a frozen server's). */
  answering: boolean;
  /** Whether connecting fails at once (refused). */
  refusing: boolean;
  connections: number;
  destroyed: number;
}

function fake(): {
  server: FakeServer;
  connect: () => Promise<{ ping(): Promise<unknown>; destroy(): void }>;
} {
  const server: FakeServer = { answering: true, refusing: false, connections: 0, destroyed: 0 };
  return {
    server,
    connect: async () => {
      if (server.refusing) throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
      server.connections++;
      return {
        ping: () => (server.answering ? Promise.resolve(1) : new Promise(() => {})),
        destroy: () => {
          server.destroyed++;
        },
      };
    },
  };
}

describe('the PostgreSQL heartbeat (circuit breaker)', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('opens when a ping goes unanswered past the timeout, abandoning what waits, and closes at the next answer', async () => {
    const health = new StorageHealth();
    const { server, connect } = fake();
    const heartbeat = startHeartbeat({ health, connect, timeoutMs: 1000 });
    try {
      await vi.advanceTimersByTimeAsync(HEARTBEAT_INTERVAL_MS);
      expect(health.available).toBe(true);
      expect(server.connections).toBe(1);

      const abandoned: StorageUnavailableError[] = [];
      health.abandonOnOutage((error) => abandoned.push(error));
      const finished = health.abandonOnOutage(() => abandoned.push(new StorageUnavailableError('busy')));
      finished(); // that wait ended on its own before the outage: not told

      server.answering = false;
      await vi.advanceTimersByTimeAsync(HEARTBEAT_INTERVAL_MS + 999);
      expect(health.available).toBe(true);
      await vi.advanceTimersByTimeAsync(2);
      expect(health.state).toMatchObject({ available: false, reason: 'timeout' });
      expect(abandoned.map((error) => error.code)).toEqual(['timeout']);
      // The connection the unanswered ping is stuck on is dropped; the next ping opens another.
      expect(server.destroyed).toBe(1);

      server.answering = true;
      await vi.advanceTimersByTimeAsync(HEARTBEAT_INTERVAL_MS);
      expect(health.available).toBe(true);
      expect(server.connections).toBe(2);
    } finally {
      heartbeat.stop();
    }
  });

  it('a refused connection opens it; pings go on while it is open and close it once the server is back', async () => {
    const health = new StorageHealth();
    const { server, connect } = fake();
    const heartbeat = startHeartbeat({ health, connect, timeoutMs: 1000 });
    try {
      server.refusing = true;
      expect(await heartbeat.beat()).toBe(false);
      expect(health.state).toMatchObject({ available: false, reason: 'unreachable' });
      await vi.advanceTimersByTimeAsync(HEARTBEAT_INTERVAL_MS * 4);
      expect(health.available).toBe(false);
      server.refusing = false;
      await vi.advanceTimersByTimeAsync(HEARTBEAT_INTERVAL_MS);
      expect(health.available).toBe(true);
    } finally {
      heartbeat.stop();
    }
    // Stopped: no more pings.
    const connections = server.connections;
    await vi.advanceTimersByTimeAsync(HEARTBEAT_INTERVAL_MS * 4);
    expect(server.connections).toBe(connections);
  });
});
