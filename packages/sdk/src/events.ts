import {
  type AuditChainHead,
  AuditChainVerification,
  AuditEvent,
  AuditEventPage,
  type AuditEventType,
} from '@idgate/schema';
import { ADMIN_CALL, ADMIN_STREAM } from './admin-http.js';
import { IdgateHttpError, IdgateSchemaError, IdgateSdkError } from './errors.js';
import { UserMethods } from './users.js';

/**
 * Which audit events to list: `user` (a username, or a user id), any of `type`, `since`
 * (inclusive) and `until` (exclusive) as ISO 8601 instants or Dates, and a page.
 */
export interface AuditEventListOptions {
  user?: string;
  type?: AuditEventType | readonly AuditEventType[];
  since?: string | Date;
  until?: string | Date;
  /** 1–500, server default 100. */
  limit?: number;
  /** The `nextCursor` of the page before. */
  cursor?: string;
}

/** How {@link IdgateAuditMethods.followEvents} streams. */
export interface FollowEventsOptions {
  /** Ends the stream (and the iteration). */
  signal?: AbortSignal;
  /** Resume after this event id (the last one received), as `Last-Event-ID`. */
  lastEventId?: string;
  /**
   * Reconnecting after the stream ends without `signal` (the server closes streams after
   * `audit.stream.maxLifetime`, on shutdown, or when the connection or the database fails):
   * resumes after the last event received (or the stream's starting position), waiting
   * `initialDelayMs` (default 1000) doubled on each failed attempt up to `maxDelayMs` (30000),
   * and giving up after `maxAttempts` (10) attempts in a row that fail. `false`: the iteration
   * ends with the stream. A refusal (`401`, `403`, `429 too_many_streams`, …) is never retried:
   * it is thrown as an `IdgateHttpError`.
   */
  reconnect?: boolean | ReconnectOptions;
}

/** The backoff of {@link FollowEventsOptions.reconnect}. */
export interface ReconnectOptions {
  maxAttempts?: number;
  initialDelayMs?: number;
  maxDelayMs?: number;
}

/**
 * The audit-trail methods of {@link IdgateAdminClient} (`/admin/v1/events`).
 * @example
 * const admin = createIdgateAdminClient({ baseUrl: 'https://id.example.com', apiKey: adminKey });
 * const { items } = await admin.listEvents({ type: 'sign-in.failed', since: '2026-01-01T00:00:00Z' });
 */
export interface IdgateAuditMethods {
  /**
   * `GET /admin/v1/events`: one page of audit events, oldest first, each checked by `AuditEvent`.
   * @example const { items, nextCursor } = await admin.listEvents({ user: 'alice', limit: 50 });
   */
  listEvents(query?: AuditEventListOptions): Promise<AuditEventPage>;

  /**
   * Every page of `listEvents(query)` in turn: each matching event, oldest first.
   * @example for await (const event of admin.eachEvent({ type: 'admin.changed' })) console.log(event.id);
   */
  eachEvent(query?: Omit<AuditEventListOptions, 'cursor'>): AsyncGenerator<AuditEvent, void, undefined>;

  /**
   * `GET /admin/v1/events/stream`: the events from `query.since` (default: now) on, then each new
   * one as it is recorded by any replica, until `signal` aborts (the iteration then ends). When
   * the server ends the stream it reconnects with `Last-Event-ID` (see
   * {@link FollowEventsOptions.reconnect}), so no event is missed or repeated.
   * @throws IdgateHttpError for a refusal: `status` 429 and `problem.code` `too_many_streams` when
   * the key (or the server) has as many streams open as it may, `Retry-After` in `headers`.
   * @example for await (const event of admin.followEvents({ type: 'sign-in.failed' }, { signal })) alert(event);
   */
  followEvents(
    query?: Omit<AuditEventListOptions, 'cursor' | 'limit'>,
    options?: FollowEventsOptions,
  ): AsyncGenerator<AuditEvent, void, undefined>;

  /**
   * `POST /admin/v1/events/verify`: verifies the tamper-evident chains of the audit trail, and that
   * each of `heads` (recorded from an earlier verification's `heads`) is still there unchanged.
   * Record the answer's `heads` outside idgate for the next run.
   * @example
   * const result = await admin.verifyEvents({ heads: lastHeads });
   * if (!result.intact) alert(result.broken); else lastHeads = result.heads;
   */
  verifyEvents(options?: { heads?: readonly AuditChainHead[] }): Promise<AuditChainVerification>;
}

function eventQuery(query: AuditEventListOptions): string {
  const params = new URLSearchParams();
  if (query.user !== undefined) params.set('user', query.user);
  const types = query.type === undefined ? [] : typeof query.type === 'string' ? [query.type] : query.type;
  for (const type of types) params.append('type', type);
  for (const key of ['since', 'until'] as const) {
    const value = query[key];
    if (value !== undefined) params.set(key, value instanceof Date ? value.toISOString() : value);
  }
  if (query.limit !== undefined) params.set('limit', String(query.limit));
  if (query.cursor !== undefined) params.set('cursor', query.cursor);
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}

/** The audit methods of the admin client; its class extends this one. */
export class AuditMethods extends UserMethods implements IdgateAuditMethods {
  listEvents(query: AuditEventListOptions = {}): Promise<AuditEventPage> {
    return this[ADMIN_CALL]({
      method: 'GET',
      path: `admin/v1/events${eventQuery(query)}`,
      schema: AuditEventPage,
      schemaName: '{ items: AuditEvent[], nextCursor }',
    });
  }

  async *eachEvent(
    query: Omit<AuditEventListOptions, 'cursor'> = {},
  ): AsyncGenerator<AuditEvent, void, undefined> {
    let cursor: string | null = null;
    do {
      const page: AuditEventPage = await this.listEvents(cursor === null ? query : { ...query, cursor });
      yield* page.items;
      cursor = page.nextCursor;
    } while (cursor !== null);
  }

  verifyEvents(options: { heads?: readonly AuditChainHead[] } = {}): Promise<AuditChainVerification> {
    return this[ADMIN_CALL]({
      method: 'POST',
      path: 'admin/v1/events/verify',
      schema: AuditChainVerification,
      schemaName: 'AuditChainVerification',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(options.heads === undefined ? {} : { heads: options.heads }),
    });
  }

  async *followEvents(
    query: Omit<AuditEventListOptions, 'cursor' | 'limit'> = {},
    options: FollowEventsOptions = {},
  ): AsyncGenerator<AuditEvent, void, undefined> {
    const { signal } = options;
    const backoff = reconnectOptions(options.reconnect);
    let lastEventId = options.lastEventId;
    let failures = 0;
    for (let connected = false; ; ) {
      let ended: unknown;
      try {
        for await (const item of this.#streamOnce(query, lastEventId, signal)) {
          if (item.id !== undefined) lastEventId = item.id;
          connected = true;
          failures = 0;
          if (item.event !== undefined) yield item.event;
        }
      } catch (error) {
        if (signal?.aborted) return;
        // A refusal is an answer, not an outage: a key without the scope, too many streams.
        if (error instanceof IdgateHttpError && error.status < 500) throw error;
        if (error instanceof IdgateSchemaError || !connected) throw error;
        ended = error;
      }
      if (signal?.aborted) return;
      if (backoff === undefined) {
        if (ended !== undefined) throw ended;
        return;
      }
      if (++failures > backoff.maxAttempts)
        throw new IdgateSdkError(
          `the event stream could not be resumed after ${backoff.maxAttempts} attempts`,
          {
            endpoint: STREAM,
            cause: ended,
          },
        );
      await delay(Math.min(backoff.maxDelayMs, backoff.initialDelayMs * 2 ** (failures - 1)), signal);
    }
  }

  /** One connection of {@link followEvents}: each block's id and event as it comes, until the stream ends. */
  async *#streamOnce(
    query: Omit<AuditEventListOptions, 'cursor' | 'limit'>,
    lastEventId: string | undefined,
    signal: AbortSignal | undefined,
  ): AsyncGenerator<StreamItem, void, undefined> {
    const path = `admin/v1/events/stream${eventQuery(query)}`;
    const headers: Record<string, string> = { accept: 'text/event-stream' };
    if (lastEventId !== undefined) headers['last-event-id'] = lastEventId;
    const response = await this[ADMIN_STREAM](path, headers, signal);
    if (response.body === null)
      throw new IdgateSdkError('the event stream has no body', { endpoint: STREAM });
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    try {
      for (;;) {
        const chunk = await reader.read();
        if (chunk.done) return;
        buffer += chunk.value;
        let end = buffer.indexOf('\n\n');
        while (end !== -1) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          yield parseBlock(block);
          end = buffer.indexOf('\n\n');
        }
      }
    } finally {
      // Closes the connection when the caller stops early (a `break`): the server frees the stream.
      await reader.cancel().catch(() => {});
      reader.releaseLock();
    }
  }
}

const STREAM = 'GET /admin/v1/events/stream';

/** One block of the stream: the id it sets (`id:`), and its event when it has one. */
interface StreamItem {
  id?: string;
  event?: AuditEvent;
}

function reconnectOptions(option: FollowEventsOptions['reconnect']): Required<ReconnectOptions> | undefined {
  if (option === false) return undefined;
  const given = option === true || option === undefined ? {} : option;
  return {
    maxAttempts: given.maxAttempts ?? 10,
    initialDelayMs: given.initialDelayMs ?? 1000,
    maxDelayMs: given.maxDelayMs ?? 30_000,
  };
}

function delay(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done);
  });
}

// One server-sent event (HTML § 9.2): comments (`:` lines) are heartbeats, `id:` moves the
// position a reconnection resumes from, `data:` is the event.
function parseBlock(block: string): StreamItem {
  const lines = block.split('\n');
  const field = (name: string) =>
    lines
      .filter((line) => line.startsWith(`${name}:`))
      .map((line) => line.slice(line.startsWith(`${name}: `) ? name.length + 2 : name.length + 1));
  const data = field('data').join('\n');
  const type = field('event').at(-1);
  const id = field('id').at(-1);
  if (type === 'error')
    throw new IdgateSdkError('the event stream ended: the server could not read the audit trail', {
      endpoint: STREAM,
    });
  if (data === '') return id === undefined ? {} : { id };
  const parsed = AuditEvent.safeParse(JSON.parse(data));
  if (!parsed.success)
    throw new IdgateSchemaError('GET /admin/v1/events/stream sent an event that does not match AuditEvent', {
      endpoint: STREAM,
      status: 200,
      issues: parsed.error.issues,
    });
  return id === undefined ? { event: parsed.data } : { id, event: parsed.data };
}
