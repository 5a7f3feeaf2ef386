import { PassThrough } from 'node:stream';
import {
  auditEventFilter,
  followAuditEvents,
  listAuditEvents,
  parseAuditEventQuery,
  verifyAuditTrail,
} from '@idgate/core/admin';
import {
  AuditChainVerification,
  AuditChainVerifyRequest,
  AuditEventPage,
  AuditEventQuery,
} from '@idgate/schema';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import * as zm from 'zod/mini';
import { auditFollowTiming } from '../../audit/follow-timing.js';
import { adminScope } from './scope.js';

const EVENTS = '/admin/v1/events';

const StreamQuery = zm.omit(AuditEventQuery, { limit: true, cursor: true });
const StreamHeaders = z.object({
  'last-event-id': z.string().optional().describe('the id of the last event received: resume after it'),
});

const BAD_FILTER = {
  description: 'a bad filter, limit or cursor (the problem names the field)',
  problem: ['invalid_request'],
} as const;

/**
 * The admin REST API of the audit trail: `GET /admin/v1/events` lists events a page at a time,
 * oldest first, filtered by user, types and time; `GET /admin/v1/events/stream` tails them live
 * as server-sent events (resumable with `Last-Event-ID`), seeing what any replica on the same
 * database records; `POST /admin/v1/events/verify` verifies its tamper-evident chains. All need an
 * API key holding `audit:read`.
 */
export async function adminAuditEventRoutes(app: FastifyInstance): Promise<void> {
  const { config } = app.idgate;
  const { route } = adminScope(app, 'audit_event');
  const timing = auditFollowTiming(config.audit);

  app.get(
    EVENTS,
    route(
      {
        operationId: 'listEvents',
        scope: 'audit:read',
        summary: 'The audit trail',
        description:
          'Security events, oldest first by (occurredAt, id). `user` is a username or, when no user has that name, a user id (events of deleted users stay findable); `type` repeats for any of several types; `since` (inclusive) and `until` (exclusive) are ISO 8601 instants with an offset.',
        tags: ['audit'],
        query: AuditEventQuery,
        responses: { 200: { description: 'one page of events', json: AuditEventPage }, 400: BAD_FILTER },
      },
      // listAuditEvents takes the query as sent (the SDK's and the CLI's too).
      (_input, request) => listAuditEvents(request.admin, request.query),
    ),
  );

  app.post(
    `${EVENTS}/verify`,
    route(
      {
        operationId: 'verifyEvents',
        scope: 'audit:read',
        summary: 'Verify the tamper-evident chains of the audit trail',
        description:
          'Checks every writer’s chain (each event’s hash over its stored fields, each link to the event before, no gap but what the retention purge anchored) and that each recorded head in `heads` (from an earlier verification) is still there with its hash. Answers 200 whether or not the trail is intact: `intact`, every break (`broken`: writer, seq, event id, `altered`/`deleted`/`inserted`/`rewritten`) and the `heads` to record outside idgate for the next run. Reads the whole trail: for a scheduled job, not for every request. The body may be empty.',
        tags: ['audit'],
        body: { json: AuditChainVerifyRequest, required: false },
        responses: {
          200: { description: 'the verification', json: AuditChainVerification },
          400: {
            description: 'a bad recorded head (the problem names the field)',
            problem: ['invalid_request'],
          },
        },
      },
      { json: 'recorded chain heads' },
      ({ body }, request) => verifyAuditTrail(request.admin, body ?? {}),
    ),
  );

  app.get(
    `${EVENTS}/stream`,
    route(
      {
        operationId: 'followEvents',
        scope: 'audit:read',
        summary: 'A live tail of the audit trail',
        description:
          'Server-sent events (`text/event-stream`): each event as `id: <event id>`, `event: <type>` and `data: <the event as JSON>`, from `since` (default: now) on, then each new one as it commits on any replica; a comment line every `audit.stream.heartbeat` seconds (default 15) keeps proxies from closing the connection. Send `Last-Event-ID` to resume after an event. Same filters as the listing.',
        tags: ['audit'],
        query: StreamQuery,
        headers: StreamHeaders,
        responses: {
          200: {
            description: 'the stream, until the client closes it',
            content: { 'text/event-stream': 'one server-sent event per audit event' },
          },
          400: BAD_FILTER,
        },
      },
      async (_input, request, reply) => {
        // A limit or cursor is refused as the listing refuses it, and otherwise left unused.
        const { limit: _limit, cursor: _cursor, ...filters } = parseAuditEventQuery(request.query);
        const filter = await auditEventFilter(request.admin.storage, filters);
        // The database must answer before the stream starts: in an outage the caller gets the 503
        // problem with Retry-After that every admin route answers, not a 200 stream that ends at once.
        await request.admin.storage.auditEvents.list({ ...filter, limit: 1 });
        const lastId = request.headers['last-event-id'];
        const abort = new AbortController();
        request.raw.on('close', () => abort.abort());
        // A stream handed to fastify: the headers and the first line go out at once, and fastify ends
        // the response when the stream ends.
        const out = new PassThrough();
        out.write(': idgate audit stream\n\n');
        const heartbeat = setInterval(() => out.write(': keep-alive\n\n'), timing.heartbeatMs);
        void (async () => {
          try {
            const events = followAuditEvents(request.admin.storage.auditEvents, filter, {
              signal: abort.signal,
              intervalMs: timing.intervalMs,
              windowMs: timing.windowMs,
              afterId: typeof lastId === 'string' && lastId !== '' ? lastId : undefined,
              fromMs: filter.since?.getTime() ?? request.admin.clock.now(),
            });
            for await (const event of events) {
              out.write(`id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
            }
          } catch (error) {
            // Headers are gone: say so in the stream and end it; the client reconnects with Last-Event-ID.
            request.log.warn({ err: error }, 'audit stream ended');
            out.write('event: error\ndata: {"code":"storage_unavailable"}\n\n');
          } finally {
            clearInterval(heartbeat);
            out.end();
          }
        })();
        return reply
          .header('content-type', 'text/event-stream; charset=utf-8')
          .header('cache-control', 'no-store')
          .header('x-accel-buffering', 'no')
          .send(out);
      },
    ),
  );
}
