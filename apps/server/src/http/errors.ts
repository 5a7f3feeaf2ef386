import { isIdgateError } from '@idgate/core';
import type { ProblemCode } from '@idgate/schema';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** How a route answers errors: RFC 6749 JSON for OAuth endpoints, RFC 9457 for everything else. */
export type ErrorFormat = 'oauth' | 'problem';

declare module 'fastify' {
  interface FastifyContextConfig {
    errorFormat?: ErrorFormat;
  }
}

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/** Sends an RFC 9457 problem. */
export function sendProblem(
  reply: FastifyReply,
  status: number,
  code: ProblemCode,
  detail: string,
): FastifyReply {
  return reply
    .status(status)
    .type('application/problem+json')
    .send({ type: 'about:blank', title: TITLES[status] ?? 'Error', status, detail, code });
}

// What fastify's own request-parsing errors mean to a client, by fastify error code.
const PARSE_ERRORS: Record<string, { status: number; code: ProblemCode; detail: string }> = {
  FST_ERR_CTP_BODY_TOO_LARGE: {
    status: 413,
    code: 'body_too_large',
    detail: 'the request body is too large',
  },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: {
    status: 415,
    code: 'unsupported_media_type',
    detail: 'the request content type is not accepted here',
  },
  FST_ERR_CTP_EMPTY_JSON_BODY: { status: 400, code: 'invalid_body', detail: 'the JSON body is empty' },
  FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, code: 'invalid_body', detail: 'the body is not valid JSON' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: {
    status: 400,
    code: 'invalid_body',
    detail: 'the Content-Length does not match the body',
  },
  FST_ERR_CTP_EMPTY_TYPE: {
    status: 415,
    code: 'unsupported_media_type',
    detail: 'the content type is missing',
  },
  FST_ERR_CTP_INVALID_TYPE: {
    status: 415,
    code: 'unsupported_media_type',
    detail: 'the content type is not valid',
  },
};

function parseError(error: FastifyError): { status: number; code: ProblemCode; detail: string } | undefined {
  if (error.code !== undefined && error.code in PARSE_ERRORS) return PARSE_ERRORS[error.code];
  // JSON.parse failures reach here as SyntaxError with status 400.
  if (error instanceof SyntaxError && error.statusCode === 400)
    return PARSE_ERRORS.FST_ERR_CTP_INVALID_JSON_BODY;
  return undefined;
}

/**
 * The one error handler: protocol errors in their wire form, request-parsing errors with their
 * status, and anything unexpected as a generic 500 logged with the request id — never a stack
 * trace, SQL text or internal message in a response.
 */
export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const format = request.routeOptions.config.errorFormat ?? 'problem';
    if (isIdgateError(error)) {
      reply.headers(error.headers);
      if (format === 'oauth') return reply.status(error.status).send(error.toJSON());
      return sendProblem(reply, error.status, error.problemCode, error.description);
    }
    const parse = parseError(error);
    if (parse !== undefined) {
      if (format === 'oauth') {
        // RFC 6749 §5.2: an OAuth client understands 400 invalid_request for any malformed request.
        const status = parse.status === 415 ? 400 : parse.status;
        return reply.status(status).send({ error: 'invalid_request', error_description: parse.detail });
      }
      return sendProblem(reply, parse.status, parse.code, parse.detail);
    }
    request.log.error({ err: error }, 'unexpected error');
    if (format === 'oauth') {
      return reply
        .status(500)
        .send({ error: 'server_error', error_description: 'the server could not answer this request' });
    }
    return sendProblem(reply, 500, 'internal_error', 'the server could not answer this request');
  });

  app.setNotFoundHandler((request, reply) =>
    sendProblem(reply, 404, 'not_found', `no route for ${request.method} ${request.url.split('?')[0]}`),
  );
}
