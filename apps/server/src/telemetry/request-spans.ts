import {
  type Attributes,
  type Context,
  context,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapGetter,
  trace,
} from '@opentelemetry/api';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Tracing } from './tracing.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The context the request's span is active in (set only when tracing is on). */
    traceContext: Context | undefined;
  }
}

type Headers = FastifyRequest['headers'];

const getHeader: TextMapGetter<Headers> = {
  keys: (headers) => Object.keys(headers),
  get: (headers, key) => headers[key],
};

// HTTP semantic conventions: any other method is recorded as _OTHER.
const KNOWN_METHODS = new Set([
  'CONNECT',
  'DELETE',
  'GET',
  'HEAD',
  'OPTIONS',
  'PATCH',
  'POST',
  'PUT',
  'TRACE',
]);

/**
 * The attributes known when a request arrives. `url.path` only: a query string (`/oauth/callback`,
 * `/oauth/authorize`) can carry an authorization code or state, and is never recorded; nor is any
 * header but the user agent.
 */
function requestAttributes(request: FastifyRequest): Attributes {
  const method = KNOWN_METHODS.has(request.method) ? request.method : '_OTHER';
  const route = request.routeOptions.url;
  const { socket } = request.raw;
  const userAgent = request.headers['user-agent'];
  const query = request.url.indexOf('?');
  return {
    'http.request.method': method,
    ...(method === '_OTHER' ? { 'http.request.method_original': request.method } : {}),
    'url.scheme': request.protocol,
    'url.path': query === -1 ? request.url : request.url.slice(0, query),
    ...(route === undefined ? {} : { 'http.route': route }),
    'server.address': request.hostname,
    ...(request.port === null ? {} : { 'server.port': request.port }),
    'client.address': request.ip,
    ...(socket.remoteAddress === undefined ? {} : { 'network.peer.address': socket.remoteAddress }),
    ...(socket.remotePort === undefined ? {} : { 'network.peer.port': socket.remotePort }),
    'network.protocol.version': request.raw.httpVersion,
    ...(userAgent === undefined ? {} : { 'user_agent.original': userAgent }),
  };
}

function spanOf(request: FastifyRequest): Span | undefined {
  return request.traceContext === undefined ? undefined : trace.getSpan(request.traceContext);
}

/**
 * A server span per request, named `METHOD route` with the HTTP semantic conventions' attributes,
 * child of the W3C trace context the request carries; every span started while the request is
 * handled (database, upstream, LDAP, signing) is its child. Registered only when tracing is on.
 */
export const requestSpans = fp(
  async (app: FastifyInstance, { tracing }: { tracing: Tracing }) => {
    const { tracer, propagator } = tracing;
    app.decorateRequest('traceContext', undefined);
    app.addHook('onRequest', (request, _reply, done) => {
      const parent = propagator.extract(ROOT_CONTEXT, request.headers, getHeader);
      const route = request.routeOptions.url;
      const span = tracer.startSpan(
        route === undefined ? request.method : `${request.method} ${route}`,
        { kind: SpanKind.SERVER, attributes: requestAttributes(request) },
        parent,
      );
      request.traceContext = trace.setSpan(parent, span);
      context.with(request.traceContext, done);
    });
    // A body arrives in the socket's events, outside the context entered above: enter it again
    // for validation, the handlers and everything they start.
    app.addHook('preValidation', (request, _reply, done) => {
      if (request.traceContext === undefined) done();
      else context.with(request.traceContext, done);
    });
    app.addHook('onResponse', (request, reply, done) => {
      const span = spanOf(request);
      if (span !== undefined) {
        const status = reply.statusCode;
        span.setAttribute('http.response.status_code', status);
        // A server span fails on 5xx only: a 4xx is the client's mistake, answered as designed.
        if (status >= 500) {
          span.setAttribute('error.type', String(status));
          span.setStatus({ code: SpanStatusCode.ERROR });
        }
        span.end();
      }
      done();
    });
    app.addHook('onRequestAbort', (request, done) => {
      const span = spanOf(request);
      if (span !== undefined) {
        span.setAttribute('error.type', 'aborted');
        span.setStatus({ code: SpanStatusCode.ERROR });
        span.end();
      }
      done();
    });
  },
  { name: 'idgate-request-spans' },
);
