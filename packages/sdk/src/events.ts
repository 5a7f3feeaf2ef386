import {
  type AuditChainHead,
  AuditChainVerification,
  AuditEvent,
  AuditEventPage,
  type AuditEventType,
} from '@idgate/schema';
import { ADMIN_CALL, ADMIN_STREAM } from './admin-http.js';
import { IdgateSchemaError, IdgateSdkError } from './errors.js';
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
   * one as it is recorded by any replica, until `signal` aborts (the iteration then ends).
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
    const path = `admin/v1/events/stream${eventQuery(query)}`;
    const headers: Record<string, string> = { accept: 'text/event-stream' };
    if (options.lastEventId !== undefined) headers['last-event-id'] = options.lastEventId;
    let response: Response;
    try {
      response = await this[ADMIN_STREAM](path, headers, options.signal);
    } catch (error) {
      if (options.signal?.aborted) return;
      throw error;
    }
    if (response.body === null)
      throw new IdgateSdkError('the event stream has no body', { endpoint: 'GET /admin/v1/events/stream' });
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    try {
      for (;;) {
        let chunk: ReadableStreamReadResult<string>;
        try {
          chunk = await reader.read();
        } catch (error) {
          if (options.signal?.aborted) return;
          throw error;
        }
        if (chunk.done) return;
        buffer += chunk.value;
        let end = buffer.indexOf('\n\n');
        while (end !== -1) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = parseBlock(block);
          if (event !== undefined) yield event;
          end = buffer.indexOf('\n\n');
        }
      }
    } finally {
      reader.releaseLock();
    }
  }
}

// One server-sent event (RFC: HTML § 9.2): comments (`:` lines) are heartbeats, `data:` the event.
function parseBlock(block: string): AuditEvent | undefined {
  const data = block
    .split('\n')
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(line.startsWith('data: ') ? 6 : 5))
    .join('\n');
  const type = /^event: ?(.*)$/m.exec(block)?.[1];
  if (data === '' || type === 'error') {
    if (type === 'error')
      throw new IdgateSdkError('the event stream ended: the server could not read the audit trail', {
        endpoint: 'GET /admin/v1/events/stream',
      });
    return undefined;
  }
  const parsed = AuditEvent.safeParse(JSON.parse(data));
  if (!parsed.success)
    throw new IdgateSchemaError('GET /admin/v1/events/stream sent an event that does not match AuditEvent', {
      endpoint: 'GET /admin/v1/events/stream',
      status: 200,
      issues: parsed.error.issues,
    });
  return parsed.data;
}
