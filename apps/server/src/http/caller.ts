import type { Caller, RequestOrigin } from '@idgate/core';
import { isSpanContextValid, trace } from '@opentelemetry/api';
import type { FastifyRequest } from 'fastify';

/**
 * The OpenTelemetry trace id of a request: its server span's (the active span of its handlers),
 * when tracing is on and the span has a valid context; undefined otherwise.
 */
function traceIdOf(request: FastifyRequest): string | undefined {
  if (request.traceContext === undefined) return undefined;
  const context = trace.getSpan(request.traceContext)?.spanContext();
  return context !== undefined && isSpanContextValid(context) ? context.traceId : undefined;
}

/**
 * Where a request came from, as its audit events record it: the address (as `trustProxy`
 * resolves it), the user agent, the request id (the log's `reqId`) and the trace id.
 */
export function requestOrigin(request: FastifyRequest): RequestOrigin & Caller {
  return {
    address: request.ip,
    userAgent: request.headers['user-agent'],
    requestId: request.id,
    traceId: traceIdOf(request),
  };
}

/** Who a request is, as core's use cases take it: where it came from and its logger. */
export function callerOf(request: FastifyRequest): Caller {
  return {
    address: request.ip,
    userAgent: request.headers['user-agent'],
    requestId: request.id,
    traceId: traceIdOf(request),
    log: request.log,
  };
}
