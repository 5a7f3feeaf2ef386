import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { PassThrough } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import { describe, expect, it } from 'vitest';
import { AuditStreamHub, type AuditStreamLimits } from '../../src/audit/stream-hub.js';
import { createMetrics } from '../../src/telemetry/metrics.js';
import { testClock } from '../helpers/server.js';

const LIMITS: AuditStreamLimits = {
  maxPerKey: 5,
  maxPerProcess: 100,
  maxBufferedBytes: 1_048_576,
  maxLifetimeMs: 900_000,
  idleTimeoutMs: 60_000,
  heartbeatMs: 15_000,
  intervalMs: 1000,
  windowMs: 10_000,
};

/** The response under a stream: what the hub reads of it (its own buffer), and whether it was dropped. */
function fakeResponse(): ServerResponse & { dropped: boolean } {
  const response = Object.assign(new EventEmitter(), {
    writableLength: 0,
    dropped: false,
    destroy() {
      response.dropped = true;
      response.emit('close');
    },
  });
  return response as unknown as ServerResponse & { dropped: boolean };
}

// What "idle" means is hard to reach over loopback (the kernel's socket buffers take megabytes a
// reader never reads); here the stream's body is simply not read.
describe('the live tail of one process, its idle readers', () => {
  it('drops a stream whose client takes nothing of what waits for idleTimeout, and keeps one that reads', async () => {
    const clock = testClock();
    const metrics = createMetrics();
    const warnings: unknown[] = [];
    const log = { warn: (entry: unknown) => warnings.push(entry) } as unknown as FastifyBaseLogger;
    const hub = new AuditStreamHub({ events: { list: async () => [] }, clock, limits: LIMITS, metrics, log });
    const open = (keyId: string) => {
      const slot = hub.reserve(keyId);
      if ('limit' in slot) throw new Error('refused');
      const body = new PassThrough();
      const response = fakeResponse();
      hub.start(slot, {}, { fromMs: clock.now() }, [], { body, response, log });
      return { body, response };
    };
    const silent = open('k1');
    const reading = open('k2');
    reading.body.resume();
    await new Promise((resolve) => setImmediate(resolve));
    hub.tick();
    clock.advance(59_000);
    hub.tick();
    expect(silent.response.dropped).toBe(false);
    clock.advance(1000);
    hub.tick();
    expect(silent.response.dropped).toBe(true);
    expect(reading.response.dropped).toBe(false);
    const closed = (await metrics.auditStreamsClosed.get()).values;
    expect(closed).toEqual([expect.objectContaining({ labels: { reason: 'idle' }, value: 1 })]);
    expect(warnings).toEqual([{ stream: expect.objectContaining({ reason: 'idle', apiKeyId: 'k1' }) }]);
    hub.close();
    expect((await metrics.auditStreams.get()).values[0]?.value).toBe(0);
  });
});
