import type { ServerResponse } from 'node:http';
import type { PassThrough } from 'node:stream';
import type { AuditEventRepository, Clock } from '@idgate/core';
import { type AuditEventFilter, auditEventTime, followAuditEvents } from '@idgate/core/admin';
import type { AuditEvent } from '@idgate/schema';
import type { FastifyBaseLogger } from 'fastify';
import type { Metrics } from '../telemetry/metrics.js';

/** Why a live tail ended (the `reason` of `idgate_audit_streams_closed_total`). */
export type StreamEnd = 'client' | 'lifetime' | 'idle' | 'backpressure' | 'error' | 'shutdown';

/** The bounds and timing of the live tails of one process, in milliseconds and bytes. */
export interface AuditStreamLimits {
  maxPerKey: number;
  maxPerProcess: number;
  maxBufferedBytes: number;
  maxLifetimeMs: number;
  idleTimeoutMs: number;
  heartbeatMs: number;
  /** Between the shared poll's reads when nothing new came. */
  intervalMs: number;
  /** How far behind the newest event seen each read looks again (late commits). */
  windowMs: number;
}

/** A place among the open streams, held from the request's check until its stream ends. */
export interface StreamSlot {
  readonly keyId: string;
  readonly openedAt: number;
  /** Gives the place back (a stream that could not start); idempotent. */
  release(): void;
}

/** The refusal of a stream past a cap: which cap, and when a place frees at the latest. */
export interface StreamRefusal {
  readonly limit: 'key' | 'process';
  readonly retryAfterSeconds: number;
}

/** Where a stream starts: after an event (`Last-Event-ID`) or from an instant. */
export interface StreamPosition {
  fromMs: number;
  afterId?: string | undefined;
}

/** What a stream writes to: the body fastify sends, and the response under it. */
export interface StreamOutput {
  body: PassThrough;
  response: ServerResponse;
  log: FastifyBaseLogger;
}

const PAGE = 500;
// Events the shared poll hands a stream while it still reads its own backlog: past this many it
// is treated as a reader that does not keep up.
const MAX_PENDING = 10 * PAGE;
const TICK_MS = 1000;
const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/**
 * The smallest event id of instant `ms`: a position that `Last-Event-ID` resumes from, before
 * every event of that millisecond (ids are ULIDs: 10 characters of time, then randomness).
 */
export function positionId(ms: number): string {
  let time = '';
  for (let rest = Math.max(0, Math.floor(ms)), i = 0; i < 10; i++, rest = Math.floor(rest / 32))
    time = CROCKFORD.charAt(rest % 32) + time;
  return `${time}${'0'.repeat(16)}`;
}

function matches(filter: AuditEventFilter, event: AuditEvent, at: number): boolean {
  if (filter.userId !== undefined && event.subject !== filter.userId) return false;
  if (filter.types !== undefined && filter.types.length > 0 && !filter.types.includes(event.type))
    return false;
  if (filter.since !== undefined && at < filter.since.getTime()) return false;
  if (filter.until !== undefined && at >= filter.until.getTime()) return false;
  return true;
}

/**
 * The live tails of the audit trail of one server process (`GET /admin/v1/events/stream`):
 * bounded per API key and in all (`reserve` refuses past either), fed by ONE poll of the audit
 * table for all of them (each stream reads only its own backlog as it starts), and ended when
 * their client does not read (more than `maxBufferedBytes` waiting: dropped at once; anything
 * waiting unread for `idleTimeoutMs`: dropped), or when they reach `maxLifetimeMs` (closed: the
 * client resumes with `Last-Event-ID`).
 * @example const slot = hub.reserve(keyId); if ('limit' in slot) refuse(slot.retryAfterSeconds);
 */
export class AuditStreamHub {
  readonly #slots = new Set<StreamSlot>();
  readonly #streams = new Set<AuditStream>();
  #poll: AbortController | undefined;
  #ticker: NodeJS.Timeout | undefined;
  readonly #reads: Pick<AuditEventRepository, 'list'>;

  constructor(
    private readonly deps: {
      events: Pick<AuditEventRepository, 'list'>;
      clock: Clock;
      limits: AuditStreamLimits;
      metrics: Metrics;
      log: FastifyBaseLogger;
    },
  ) {
    const { events, metrics } = deps;
    // Looked up on each read, so a test's spy on the repository sees them.
    this.#reads = {
      list: (query) => {
        metrics.auditStreamReads.inc();
        return events.list(query);
      },
    };
  }

  get limits(): AuditStreamLimits {
    return this.deps.limits;
  }

  get now(): number {
    return this.deps.clock.now();
  }

  /** A place for a stream of `keyId`, or why not (checked and taken at once: no await between). */
  reserve(keyId: string): StreamSlot | StreamRefusal {
    const { maxPerKey, maxPerProcess, maxLifetimeMs } = this.deps.limits;
    const now = this.now;
    const ofKey = [...this.#slots].filter((slot) => slot.keyId === keyId);
    const full =
      ofKey.length >= maxPerKey ? ofKey : this.#slots.size >= maxPerProcess ? [...this.#slots] : [];
    if (full.length > 0) {
      // A place frees at the latest when the oldest of them reaches its lifetime.
      const oldest = Math.min(...full.map((slot) => slot.openedAt));
      return {
        limit: ofKey.length >= maxPerKey ? 'key' : 'process',
        retryAfterSeconds: Math.max(1, Math.ceil((oldest + maxLifetimeMs - now) / 1000)),
      };
    }
    const slots = this.#slots;
    const slot: StreamSlot = {
      keyId,
      openedAt: now,
      release: () => {
        slots.delete(slot);
      },
    };
    slots.add(slot);
    return slot;
  }

  /**
   * The first page of a stream's backlog, read before its answer starts: in an outage the caller
   * gets the 503 every admin route answers, not a 200 stream that ends at once.
   */
  firstPage(filter: AuditEventFilter, position: StreamPosition): Promise<AuditEvent[]> {
    return this.#reads.list({
      ...filter,
      limit: PAGE,
      after: { occurredAt: new Date(floorOf(position)), id: '' },
    });
  }

  /** Starts the stream of `slot`: its backlog from `firstPage` on, then what the shared poll finds. */
  start(
    slot: StreamSlot,
    filter: AuditEventFilter,
    position: StreamPosition,
    firstPage: AuditEvent[],
    output: StreamOutput,
  ): AuditStream {
    const stream = new AuditStream(this, slot, filter, position, output);
    this.#streams.add(stream);
    this.deps.metrics.auditStreams.set(this.#streams.size);
    if (this.#poll === undefined) this.#startPoll();
    this.#ticker ??= setInterval(() => this.tick(), TICK_MS).unref();
    void stream.catchUp(firstPage, (after) => this.#reads.list({ ...filter, limit: PAGE, after }));
    return stream;
  }

  /** Called by a stream as it ends. */
  ended(stream: AuditStream, reason: StreamEnd): void {
    if (!this.#streams.delete(stream)) return;
    stream.slot.release();
    const { metrics } = this.deps;
    metrics.auditStreams.set(this.#streams.size);
    metrics.auditStreamsClosed.inc({ reason });
    if (this.#streams.size === 0) {
      this.#poll?.abort();
      this.#poll = undefined;
      clearInterval(this.#ticker);
      this.#ticker = undefined;
    }
  }

  /** Lifetimes, idle readers and heartbeats: once a second while streams are open. */
  tick(): void {
    const now = this.now;
    for (const stream of this.#streams) stream.tick(now);
  }

  /** Ends every stream (the server is stopping). */
  close(): void {
    for (const stream of [...this.#streams]) stream.end('shutdown');
  }

  #startPoll(): void {
    const poll = new AbortController();
    this.#poll = poll;
    const { intervalMs, windowMs } = this.deps.limits;
    void (async () => {
      try {
        const events = followAuditEvents(
          this.#reads,
          {},
          // A window back: an event that commits after a starting stream read its backlog, with
          // a time before this poll started, is still found (each stream drops what it has sent).
          { signal: poll.signal, intervalMs, windowMs, fromMs: this.now - windowMs },
        );
        for await (const event of events) {
          const at = Date.parse(event.occurredAt);
          for (const stream of this.#streams) stream.deliver(event, at);
        }
      } catch (error) {
        this.deps.log.warn({ err: error }, 'audit stream poll failed');
        for (const stream of [...this.#streams]) stream.fail();
      } finally {
        if (this.#poll === poll) this.#poll = undefined;
      }
    })();
  }
}

function floorOf(position: StreamPosition): number {
  const resumeAt = position.afterId === undefined ? undefined : auditEventTime(position.afterId);
  return resumeAt ?? position.fromMs;
}

/** One live tail: what it has sent, and how its client keeps up. */
class AuditStream {
  readonly #seen = new Map<string, number>();
  readonly #floor: number;
  readonly #resumeAt: number | undefined;
  #newest: number;
  #live = false;
  #pending: AuditEvent[] = [];
  #ended = false;
  #lastWriteAt: number;
  #lastProgressAt: number;
  #wake: (() => void) | undefined;

  constructor(
    private readonly hub: AuditStreamHub,
    readonly slot: StreamSlot,
    private readonly filter: AuditEventFilter,
    private readonly position: StreamPosition,
    private readonly output: StreamOutput,
  ) {
    const resumeAt = position.afterId === undefined ? undefined : auditEventTime(position.afterId);
    this.#resumeAt = resumeAt;
    this.#floor = resumeAt ?? position.fromMs;
    this.#newest = this.#floor;
    if (position.afterId !== undefined && resumeAt !== undefined) this.#seen.set(position.afterId, resumeAt);
    this.#lastWriteAt = this.#lastProgressAt = hub.now;
    output.response.on('close', () => this.end('client'));
    // A client gone while the backlog's first page was read: its 'close' came before this listener.
    if (output.response.socket?.destroyed === true) queueMicrotask(() => this.end('client'));
    output.response.on('drain', () => this.#wake?.());
    this.#write(': idgate audit stream\n\n');
    // Where this stream starts, as an id without an event: a client that reconnects before any
    // event came resumes from here, not from its reconnection's "now".
    if (resumeAt === undefined) this.#write(`id: ${positionId(this.#floor)}\n\n`);
  }

  /** Bytes written and not yet taken by the client: in the body, the response and the socket. */
  get buffered(): number {
    const { body, response } = this.output;
    return body.writableLength + body.readableLength + response.writableLength;
  }

  /** Its backlog, page by page, waiting for the client to read; then the shared poll's events. */
  async catchUp(
    firstPage: AuditEvent[],
    next: (after: { occurredAt: Date; id: string }) => Promise<AuditEvent[]>,
  ): Promise<void> {
    try {
      let page = firstPage;
      for (;;) {
        for (const event of page) {
          // A backlog waits for its reader (bounded memory) rather than dropping it; a reader
          // that takes nothing for idleTimeout is dropped by the tick.
          while (!this.#ended && this.buffered > this.hub.limits.maxBufferedBytes / 2)
            await new Promise<void>((resolve) => {
              this.#wake = resolve;
            });
          if (this.#ended) return;
          this.#offer(event, Date.parse(event.occurredAt));
        }
        const last = page.at(-1);
        if (page.length < PAGE || last === undefined) break;
        page = await next({ occurredAt: new Date(last.occurredAt), id: last.id });
      }
      this.#live = true;
      for (const event of this.#pending.splice(0)) this.#offer(event, Date.parse(event.occurredAt));
    } catch (error) {
      this.output.log.warn({ err: error }, 'audit stream ended');
      this.fail();
    }
  }

  /** An event the shared poll found. */
  deliver(event: AuditEvent, at: number): void {
    if (this.#ended || !matches(this.filter, event, at)) return;
    if (this.#live) this.#offer(event, at);
    else if (this.#pending.push(event) > MAX_PENDING) this.end('backpressure');
  }

  tick(now: number): void {
    if (this.#ended) return;
    const { maxLifetimeMs, idleTimeoutMs, heartbeatMs, windowMs } = this.hub.limits;
    if (now - this.slot.openedAt >= maxLifetimeMs) {
      this.end('lifetime');
      return;
    }
    if (this.buffered === 0) this.#lastProgressAt = now;
    else if (now - this.#lastProgressAt >= idleTimeoutMs) {
      this.end('idle');
      return;
    }
    if (now - this.#lastWriteAt >= heartbeatMs) this.#write(': keep-alive\n\n');
    for (const [id, at] of this.#seen) if (at < this.#newest - windowMs) this.#seen.delete(id);
    this.#wake?.();
  }

  /** The database failed: say so in the stream (headers are gone) and end it. */
  fail(): void {
    this.#write('event: error\ndata: {"code":"storage_unavailable"}\n\n');
    this.end('error');
  }

  end(reason: StreamEnd): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#pending = [];
    this.#wake?.();
    this.hub.ended(this, reason);
    const { body, response, log } = this.output;
    if (reason === 'backpressure' || reason === 'idle') {
      // The client is not reading: nothing more is written, and what waits is thrown away.
      log.warn(
        { stream: { reason, apiKeyId: this.slot.keyId, bufferedBytes: this.buffered } },
        'audit stream dropped: its client does not read',
      );
      response.destroy();
      body.destroy();
      return;
    }
    if (reason === 'lifetime')
      this.#write(': closing: maximum lifetime reached; resume with Last-Event-ID\n\n');
    if (reason === 'shutdown')
      this.#write(': closing: the server is stopping; resume with Last-Event-ID\n\n');
    body.end();
  }

  #offer(event: AuditEvent, at: number): void {
    if (this.#seen.has(event.id) || at < this.#floor) return;
    // An id at the resume instant sorting before the resumed one was delivered before.
    if (
      this.#resumeAt !== undefined &&
      at === this.#resumeAt &&
      this.position.afterId !== undefined &&
      event.id < this.position.afterId
    )
      return;
    this.#seen.set(event.id, at);
    if (at > this.#newest) this.#newest = at;
    this.#write(`id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
  }

  #write(text: string): void {
    if (this.#ended && !text.startsWith(':') && !text.startsWith('event: error')) return;
    const { body } = this.output;
    if (body.destroyed || body.writableEnded) return;
    body.write(text);
    this.#lastWriteAt = this.hub.now;
    if (!this.#ended && this.buffered > this.hub.limits.maxBufferedBytes) this.end('backpressure');
  }
}

export type { AuditStream };
