import { PassThrough } from 'node:stream';
import {
  auditEventFilter,
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
import { AuditStreamHub } from '../../audit/stream-hub.js';
import { sendProblem } from '../../http/errors.js';
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
  const { stream } = config.audit;
  const limits = {
    maxPerKey: stream.maxPerKey,
    maxPerProcess: stream.maxPerProcess,
    maxBufferedBytes: stream.maxBuffered,
    maxLifetimeMs: stream.maxLifetime * 1000,
    idleTimeoutMs: stream.idleTimeout * 1000,
    ...timing,
  };
  // One per server: every stream of this process shares its one poll of the audit table.
  const hub = new AuditStreamHub({
    events: app.idgate.admin.storage.auditEvents,
    clock: app.idgate.clock,
    limits,
    metrics: app.idgate.metrics,
    log: app.log,
  });
  // Before the server waits for its connections to end: a stream would otherwise hold it open.
  app.addHook('preClose', async () => hub.close());

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
          'Server-sent events (`text/event-stream`): each event as `id: <event id>`, `event: <type>` and `data: <the event as JSON>`, from `since` (default: now) on, then each new one as it commits on any replica; a comment line every `audit.stream.heartbeat` seconds (default 15) keeps proxies from closing the connection. The stream starts with an `id:` line of its starting position and no event: send the last id received as `Last-Event-ID` to resume after it. Same filters as the listing. Bounded: `audit.stream.maxPerKey` streams per API key (default 5) and `audit.stream.maxPerProcess` per server process (100), 429 `too_many_streams` beyond; a client that leaves more than `audit.stream.maxBuffered` bytes (1 MiB) unread, or reads nothing of what waits for `audit.stream.idleTimeout` (60 s), is disconnected; every stream is closed after `audit.stream.maxLifetime` (900 s), and its client resumes with `Last-Event-ID`.',
        tags: ['audit'],
        query: StreamQuery,
        headers: StreamHeaders,
        responses: {
          200: {
            description:
              'the stream, until the client closes it or the server ends it (lifetime, a client that does not read)',
            content: { 'text/event-stream': 'one server-sent event per audit event' },
          },
          400: BAD_FILTER,
          429: {
            description: 'too many streams are open for this API key or on this server',
            problem: ['too_many_streams'],
            headers: { 'Retry-After': 'seconds until a stream ends at the latest (its maximum lifetime)' },
          },
        },
      },
      async (_input, request, reply) => {
        // A limit or cursor is refused as the listing refuses it, and otherwise left unused.
        const { limit: _limit, cursor: _cursor, ...filters } = parseAuditEventQuery(request.query);
        const filter = await auditEventFilter(request.admin.storage, filters);
        const slot = hub.reserve(request.admin.auditActor?.()?.id ?? 'unknown');
        if ('limit' in slot) {
          const max =
            slot.limit === 'key' ? `${limits.maxPerKey} per API key` : `${limits.maxPerProcess} per server`;
          return sendProblem(
            reply.header('retry-after', String(slot.retryAfterSeconds)),
            429,
            'too_many_streams',
            `too many live streams of the audit trail are open (at most ${max}); close one or try again later`,
          );
        }
        const lastId = request.headers['last-event-id'];
        const position = {
          afterId: typeof lastId === 'string' && lastId !== '' ? lastId : undefined,
          fromMs: filter.since?.getTime() ?? request.admin.clock.now(),
        };
        let firstPage: Awaited<ReturnType<typeof hub.firstPage>>;
        try {
          firstPage = await hub.firstPage(filter, position);
        } catch (error) {
          slot.release();
          throw error;
        }
        // A stream handed to fastify: the headers and the first lines go out at once, and fastify
        // ends the response when the stream ends.
        const body = new PassThrough();
        hub.start(slot, filter, position, firstPage, { body, response: reply.raw, log: request.log });
        return reply
          .header('content-type', 'text/event-stream; charset=utf-8')
          .header('cache-control', 'no-store')
          .header('x-accel-buffering', 'no')
          .send(body);
      },
    ),
  );
}
