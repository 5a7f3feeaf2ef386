import type { Caller } from '@idgate/core';
import type { FastifyRequest } from 'fastify';

/** Who a request is, as core's use cases take it: its address, user agent and logger. */
export function callerOf(request: FastifyRequest): Caller {
  return { address: request.ip, userAgent: request.headers['user-agent'], log: request.log };
}
