import { randomInt } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import type { AuditEvent } from '@idgate/schema';
import { createIdgateAdminClient, IdgateHttpError } from '@idgate/sdk';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { testDatabaseUrls } from '../helpers/databases.js';
import { startTestServer, type TestServer, testClock } from '../helpers/server.js';

const STREAM = '/admin/v1/events/stream';
const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** A fresh audit event id (a ULID) of instant `ms`. */
function eventId(ms: number): string {
  let time = '';
  for (let rest = ms, i = 0; i < 10; i++, rest = Math.floor(rest / 32))
    time = CROCKFORD.charAt(rest % 32) + time;
  return time + Array.from({ length: 16 }, () => CROCKFORD.charAt(randomInt(32))).join('');
}
const MAX_BUFFERED = 65_536;

/** Waits (bounded) until `check` holds, looking again every 20 ms; fails naming `what`. */
async function until(what: string, check: () => boolean | Promise<boolean>, limitMs = 15_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** An open stream read as text as it arrives, and a way to close it. */
interface OpenStream {
  status: number;
  headers: Headers;
  text: () => string;
  done: Promise<void>;
  close(): void;
}

// The live tail's bounds over real HTTP: streams per key and per process, a reader that never
// reads, the maximum lifetime, and one poll of the table for every stream of the process.
describe.each(testDatabaseUrls())('bounded live tail of the audit trail on $name', (kind) => {
  let t: TestServer;
  const clock = testClock();
  let keyA: string;
  let keyB: string;
  const open: OpenStream[] = [];

  beforeAll(async () => {
    t = await startTestServer(
      kind,
      {
        audit: {
          stream: {
            maxPerKey: 5,
            maxPerProcess: 8,
            maxBuffered: MAX_BUFFERED,
            heartbeat: 300,
            maxLifetime: '15m',
          },
        },
      },
      { clock },
    );
    keyA = await t.addApiKey(['audit:read']);
    keyB = await t.addApiKey(['audit:read']);
  }, 60_000);
  afterEach(async () => {
    for (const stream of open.splice(0)) stream.close();
    await until('every stream to end', async () => (await gauge()) === 0);
  });
  afterAll(async () => t?.close());

  const metrics = () => t.server.context.metrics;
  const gauge = async () => (await metrics().auditStreams.get()).values[0]?.value ?? 0;
  const closed = async (reason: string) =>
    (await metrics().auditStreamsClosed.get()).values.find((value) => value.labels.reason === reason)
      ?.value ?? 0;

  /** Opens a stream with `key` and reads it into a string until closed. */
  async function stream(key: string, headers: Record<string, string> = {}): Promise<OpenStream> {
    const abort = new AbortController();
    const response = await fetch(`${t.baseUrl}${STREAM}`, {
      headers: { authorization: `Bearer ${key}`, ...headers },
      signal: abort.signal,
    });
    let text = '';
    const done = (async () => {
      if (response.body === null) return;
      const decoder = new TextDecoder();
      try {
        for await (const chunk of response.body)
          text += decoder.decode(chunk as Uint8Array, { stream: true });
      } catch {
        // Aborted by close().
      }
    })();
    const opened: OpenStream = {
      status: response.status,
      headers: response.headers,
      text: () => text,
      done,
      close: () => abort.abort(),
    };
    if (response.status === 200) {
      open.push(opened);
      await until('the stream to start', () => text.includes('idgate audit stream'));
    }
    return opened;
  }

  /** Audit events recorded now (the server's clock), as another process would record them. */
  async function record(count: number, userAgent: string | null = null): Promise<AuditEvent[]> {
    const events: AuditEvent[] = [];
    for (let i = 0; i < count; i++) {
      events.push({
        id: eventId(clock.now()),
        type: 'sign-out',
        occurredAt: new Date(clock.now()).toISOString(),
        actor: { kind: 'user', id: 'u-stream' },
        subject: 'u-stream',
        clientId: null,
        address: null,
        userAgent,
        requestId: null,
        traceId: null,
        outcome: 'success',
        details: { grantsRevoked: i },
      } as AuditEvent);
    }
    for (let start = 0; start < events.length; start += 500)
      await t.server.context.admin.storage.auditEvents.append(events.slice(start, start + 500));
    return events;
  }

  it('refuses a sixth stream of one key with 429 too_many_streams and Retry-After, and takes it once one ends', async () => {
    const five = [];
    for (let i = 0; i < 5; i++) five.push(await stream(keyA));
    expect(five.map((s) => s.status)).toEqual([200, 200, 200, 200, 200]);
    const sixth = await stream(keyA);
    expect(sixth.status).toBe(429);
    expect(sixth.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    // A place frees at the latest when the oldest stream reaches its lifetime (15 minutes).
    const retryAfter = Number(sixth.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(880);
    expect(retryAfter).toBeLessThanOrEqual(900);
    // Another key still may.
    expect((await stream(keyB)).status).toBe(200);
    five[0]?.close();
    await until('the closed stream to free its place', async () => (await gauge()) === 5);
    expect((await stream(keyA)).status).toBe(200);
  });

  it('names the problem for a client, through the SDK too', async () => {
    for (let i = 0; i < 5; i++) await stream(keyA);
    const response = await fetch(`${t.baseUrl}${STREAM}`, { headers: { authorization: `Bearer ${keyA}` } });
    expect(response.status).toBe(429);
    const problem = (await response.json()) as Record<string, unknown>;
    expect(problem).toMatchObject({ status: 429, code: 'too_many_streams' });
    expect(problem.detail).toMatch(/at most 5 per API key/);
    const admin = createIdgateAdminClient({ baseUrl: t.baseUrl, apiKey: keyA });
    const refused = await (async () => {
      try {
        for await (const _event of admin.followEvents({}, { reconnect: { initialDelayMs: 10 } })) break;
      } catch (error) {
        return error;
      }
      return undefined;
    })();
    expect(refused).toBeInstanceOf(IdgateHttpError);
    expect((refused as IdgateHttpError).status).toBe(429);
    expect((refused as IdgateHttpError).problem?.code).toBe('too_many_streams');
    expect(Number((refused as IdgateHttpError).headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('refuses past the process cap, whatever the key', async () => {
    for (let i = 0; i < 5; i++) await stream(keyA);
    for (let i = 0; i < 3; i++) expect((await stream(keyB)).status).toBe(200);
    const ninth = await fetch(`${t.baseUrl}${STREAM}`, { headers: { authorization: `Bearer ${keyB}` } });
    expect(ninth.status).toBe(429);
    expect(ninth.headers.get('retry-after')).toMatch(/^[0-9]+$/);
    const problem = (await ninth.json()) as Record<string, unknown>;
    expect(problem).toMatchObject({ code: 'too_many_streams' });
    expect(problem.detail).toMatch(/at most 8 per server/);
  });

  it('reads the table once per poll for all streams of the process, not once per stream', async () => {
    const list = vi.spyOn(t.server.context.admin.storage.auditEvents, 'list');
    try {
      const streams: OpenStream[] = [];
      for (let i = 0; i < 5; i++) streams.push(await stream(keyA));
      for (let i = 0; i < 3; i++) streams.push(await stream(keyB));
      const before = list.mock.calls.length;
      const started = Date.now();
      // Three events a poll apart, each seen by all eight streams.
      for (let round = 0; round < 3; round++) {
        const [event] = await record(1);
        await until('every stream to see the event', () =>
          streams.every((s) => s.text().includes(event?.id as string)),
        );
      }
      const reads = list.mock.calls.length - before;
      const seconds = (Date.now() - started) / 1000;
      // One poll a second (audit.stream.pollInterval) for everyone, and one more right after each
      // event: eight streams polling on their own would read eight times as often.
      expect(reads).toBeLessThanOrEqual(Math.ceil(seconds) + 3 + 2);
      expect(reads).toBeLessThan(8 * Math.max(1, Math.floor(seconds)));
    } finally {
      list.mockRestore();
    }
  });

  it('drops a client that never reads once 64 KiB wait for it, without buffering more', async () => {
    const before = await closed('backpressure');
    // A raw connection that reads the first bytes of the answer, then nothing at all.
    const socket: Socket = connect(Number(new URL(t.baseUrl).port), '127.0.0.1');
    let received = 0;
    const started = new Promise<void>((resolve) => socket.once('data', () => resolve()));
    socket.on('data', (chunk: Buffer) => {
      received += chunk.length;
    });
    const socketClosed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    socket.write(`GET ${STREAM} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${keyA}\r\n\r\n`);
    await started;
    socket.pause();
    await until('the stream to be open', async () => (await gauge()) === 1);
    // About 4 MB of events, far more than the kernel's socket buffers of a reader that reads nothing.
    await record(6000, 'x'.repeat(512));
    await until(
      'the server to drop the reader',
      async () => (await closed('backpressure')) === before + 1,
      30_000,
    );
    expect(await gauge()).toBe(0);
    const line = t.logs.find((entry) => entry.includes('audit stream dropped'));
    expect(line).toBeDefined();
    const logged = JSON.parse(line as string) as {
      stream: { reason: string; bufferedBytes: number; apiKeyId: string };
    };
    expect(logged.stream.reason).toBe('backpressure');
    // What waited in the server when it stopped: the bound and one event, no more.
    expect(logged.stream.bufferedBytes).toBeLessThan(MAX_BUFFERED + 4096);
    expect(line).not.toContain(keyA);
    socket.resume();
    await socketClosed;
    expect(received).toBeLessThan(6000 * 1200);
  }, 60_000);

  it('closes a stream at its maximum lifetime, by the injected clock', async () => {
    const before = await closed('lifetime');
    const s = await stream(keyA);
    clock.advance(15 * 60 * 1000);
    await s.done;
    expect(s.text()).toContain(': closing: maximum lifetime reached');
    expect(await closed('lifetime')).toBe(before + 1);
  });

  it('the SDK resumes after the server closes the stream: nothing missed, nothing twice', async () => {
    const admin = createIdgateAdminClient({ baseUrl: t.baseUrl, apiKey: keyA });
    const abort = new AbortController();
    const got: string[] = [];
    const following = (async () => {
      for await (const event of admin.followEvents(
        { user: 'u-stream' },
        { signal: abort.signal, reconnect: { initialDelayMs: 10 } },
      ))
        got.push(event.id);
    })();
    await until('the SDK stream to open', async () => (await gauge()) === 1);
    const [first] = await record(1);
    await until('the first event', () => got.includes(first?.id as string));
    const lifetimes = await closed('lifetime');
    clock.advance(15 * 60 * 1000);
    await until('the server to close the stream', async () => (await closed('lifetime')) === lifetimes + 1);
    // Made while the SDK reconnects.
    const [second] = await record(1);
    await until('the SDK to reconnect', async () => (await gauge()) === 1);
    const [third] = await record(1);
    await until('the events after the close', () => got.includes(third?.id as string));
    abort.abort();
    await following;
    expect(got).toEqual([first?.id, second?.id, third?.id]);
  });

  it('ends its streams when the server stops, rather than holding the shutdown', async () => {
    const other = await startTestServer(kind);
    const key = await other.addApiKey(['audit:read']);
    const response = await fetch(`${other.baseUrl}${STREAM}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(response.status).toBe(200);
    const reading = response.text();
    await other.close();
    expect(await reading).toContain(': closing: the server is stopping');
  });
});
