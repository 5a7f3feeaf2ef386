import { isIdgateError, type StorageUnavailableError } from '@idgate/core';
import type { OAuthErrorCode, ProblemCode } from '@idgate/schema';
import type {
  FastifyError,
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  FastifyServerOptions,
  RouteOptions,
} from 'fastify';
import { sendErrorPage } from '../pages/form-action.js';
import type { Messages } from '../pages/i18n.js';
import type { PageLooks } from '../pages/look.js';
import type { HealthLogger } from '../storage/health.js';
import type { PageHeaders } from './page-headers.js';

/**
 * How errors read: RFC 6749 JSON for OAuth endpoints, RFC 9457 problems for the admin API and
 * other programs' endpoints, an HTML page for the pages a browser navigates to.
 */
export type ErrorFormat = 'oauth' | 'problem' | 'html';

/**
 * What a route declares in its `config.errorFormat`: one format, or a JSON format for programs and
 * a page for browsers, chosen by the request's Accept header (a browser's navigation accepts
 * `text/html`, a program's request does not).
 * @example app.get('/oauth/callback/:idp', { config: { errorFormat: ['oauth', 'html'] } }, handler)
 */
export type RouteErrorFormat = ErrorFormat | readonly [json: 'oauth' | 'problem', browser: 'html'];

declare module 'fastify' {
  interface FastifyContextConfig {
    errorFormat?: RouteErrorFormat;
    /** The heading of this route's error pages (default: the status's name), in the page's language. */
    errorPageTitle?: (t: Messages) => string;
  }
}

/** What every error answers with, whatever its format; an IdgateError is one. */
interface ErrorAnswer {
  readonly status: number;
  readonly description: string;
  readonly oauthError: OAuthErrorCode;
  readonly problemCode: ProblemCode;
  readonly headers?: Readonly<Record<string, string>>;
  /** Members its problem carries beside the standard ones (RFC 9457 §3.2), e.g. a missing `scope`. */
  readonly problemMembers?: Readonly<Record<string, string>> | undefined;
}

// Paths no route claims: a program gets a problem, a person's browser a page.
const UNROUTED: RouteErrorFormat = ['problem', 'html'];

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  409: 'Conflict',
  413: 'Content Too Large',
  414: 'URI Too Long',
  415: 'Unsupported Media Type',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

// A 5xx says nothing about why: the why (a driver's message, SQL, a stack) is for the log.
const GENERIC_5XX = 'the server could not answer this request';
const GENERIC_503 = 'the service is unavailable; try again shortly';

/** Sends an RFC 9457 problem, with `members` of its own beside the standard ones. */
export function sendProblem(
  reply: FastifyReply,
  status: number,
  code: ProblemCode,
  detail: string,
  members?: Readonly<Record<string, string>>,
): FastifyReply {
  return reply
    .status(status)
    .type('application/problem+json')
    .send({ ...members, type: 'about:blank', title: TITLES[status] ?? 'Error', status, detail, code });
}

const invalidBody = (description: string): ErrorAnswer => ({
  status: 400,
  description,
  oauthError: 'invalid_request',
  problemCode: 'invalid_body',
});
const unsupportedMediaType = (description: string): ErrorAnswer => ({
  status: 415,
  description,
  oauthError: 'invalid_request',
  problemCode: 'unsupported_media_type',
});

// What fastify's own errors mean to a client, by fastify error code.
const FASTIFY_ERRORS: Record<string, ErrorAnswer> = {
  FST_ERR_BAD_URL: {
    status: 400,
    description: 'the URL is not valid',
    oauthError: 'invalid_request',
    problemCode: 'invalid_url',
  },
  FST_ERR_MAX_PARAM_LENGTH: {
    status: 414,
    description: 'the URL is too long',
    oauthError: 'invalid_request',
    problemCode: 'invalid_url',
  },
  FST_ERR_CTP_BODY_TOO_LARGE: {
    status: 413,
    description: 'the request body is too large',
    oauthError: 'invalid_request',
    problemCode: 'body_too_large',
  },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: unsupportedMediaType('the request content type is not accepted here'),
  FST_ERR_CTP_EMPTY_TYPE: unsupportedMediaType('the content type is missing'),
  FST_ERR_CTP_INVALID_TYPE: unsupportedMediaType('the content type is not valid'),
  FST_ERR_CTP_EMPTY_JSON_BODY: invalidBody('the JSON body is empty'),
  FST_ERR_CTP_INVALID_JSON_BODY: invalidBody('the body is not valid JSON'),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: invalidBody('the Content-Length does not match the body'),
};

const INVALID_REQUEST: ErrorAnswer = {
  status: 400,
  description: 'the request is not valid',
  oauthError: 'invalid_request',
  problemCode: 'invalid_request',
};

const UNEXPECTED: ErrorAnswer = {
  status: 500,
  description: GENERIC_5XX,
  oauthError: 'server_error',
  problemCode: 'internal_error',
};

/** The answer to an error: an IdgateError's own, a known fastify error's, or a generic 500. */
function answerTo(error: FastifyError): ErrorAnswer | undefined {
  if (isIdgateError(error)) return error;
  if (error.code !== undefined && error.code in FASTIFY_ERRORS) return FASTIFY_ERRORS[error.code];
  // JSON.parse failures reach here as SyntaxError with status 400.
  if (error instanceof SyntaxError && error.statusCode === 400)
    return FASTIFY_ERRORS.FST_ERR_CTP_INVALID_JSON_BODY;
  // Another 4xx of fastify or a plugin: the client's fault, in words that leak nothing.
  const status = error.statusCode;
  if (status !== undefined && status >= 400 && status < 500) return { ...INVALID_REQUEST, status };
  return undefined;
}

function chooseFormat(request: FastifyRequest, declared: RouteErrorFormat): ErrorFormat {
  if (typeof declared === 'string') return declared;
  return request.headers.accept?.includes('text/html') ? declared[1] : declared[0];
}

/** The first letter up and a full stop: a description as a page shows it. */
function sentence(description: string): string {
  const text = description.charAt(0).toUpperCase() + description.slice(1);
  return /[.!?]$/.test(text) ? text : `${text}.`;
}

interface RoutePath {
  pattern: RegExp;
  methods: Set<string>;
  format: RouteErrorFormat | undefined;
}

/** Which error format each route path declares, for requests that reach no route (404, 405, bad URLs). */
class RouteFormats {
  private readonly routes: RoutePath[] = [];
  private readonly byUrl = new Map<string, RoutePath>();

  add(route: RouteOptions): void {
    let entry = this.byUrl.get(route.url);
    if (entry === undefined) {
      entry = { pattern: pathPattern(route.url), methods: new Set(), format: undefined };
      this.byUrl.set(route.url, entry);
      // Static paths first, as the router matches them.
      if (route.url.includes(':') || route.url.includes('*')) this.routes.push(entry);
      else this.routes.unshift(entry);
    }
    for (const method of [route.method].flat()) entry.methods.add(method);
    entry.format ??= route.config?.errorFormat;
  }

  /** The route a raw request path names, ignoring the method. */
  find(url: string): { methods: ReadonlySet<string>; format: RouteErrorFormat } | undefined {
    const path = url.split('?')[0] as string;
    const trimmed = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
    const entry = this.routes.find((route) => route.pattern.test(trimmed));
    return entry === undefined ? undefined : { methods: entry.methods, format: entry.format ?? UNROUTED };
  }
}

/** A RegExp of a fastify path (`/a/:name`, `/files/*`) that matches request paths as sent. */
function pathPattern(url: string): RegExp {
  const source = url
    .split('/')
    .map((segment) => {
      if (segment.startsWith(':')) return '[^/]+';
      if (segment === '*') return '.*';
      return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    })
    .join('/');
  return new RegExp(`^${source}$`);
}

/** What {@link errorHandling} needs: how error pages look, and their headers. */
export interface ErrorHandlingOptions {
  /** The pages' look (stylesheet, product name, the browser's language). */
  looks: PageLooks;
  /** The security headers of error pages (a framework error's reply cannot reach the server's). */
  pageHeaders: PageHeaders;
  /** Headers every response carries; the error paths that skip `onSend` set them here. */
  baseHeaders(request: FastifyRequest, reply: FastifyReply): void;
  /**
   * Told of every request that failed because storage could not answer; returns whether it logged
   * that (the first failure of an outage), so the others are not logged once per request.
   */
  storageFailed?(error: StorageUnavailableError, logger: HealthLogger): boolean;
}

/**
 * The one error handling of the application: every error, thrown by a route, raised by fastify
 * while reading the request, or a request no route takes (404, 405, an undecodable URL), answers
 * in the format its route declares (`config.errorFormat`): an OAuth error, an RFC 9457 problem, or
 * an HTML page. IdgateErrors answer with their own status, headers and description; anything else
 * is a generic 500 logged with the request id. No response ever carries a stack trace, SQL text or
 * an internal message, and a 5xx says nothing but that it failed.
 * @example
 * const errors = errorHandling({ looks: new PageLooks(config), pageHeaders: pageHeaders(issuer), baseHeaders });
 * const app = Fastify({ frameworkErrors: errors.frameworkErrors });
 * errors.install(app); // before the routes are registered
 */
export function errorHandling(options: ErrorHandlingOptions): {
  frameworkErrors: NonNullable<FastifyServerOptions['frameworkErrors']>;
  install(app: FastifyInstance): void;
} {
  const formats = new RouteFormats();

  const send = (
    request: FastifyRequest,
    reply: FastifyReply,
    answer: ErrorAnswer,
    declared: RouteErrorFormat,
  ) => {
    if (answer.headers !== undefined) reply.headers(answer.headers);
    const { status } = answer;
    const description = status < 500 ? answer.description : status === 503 ? GENERIC_503 : GENERIC_5XX;
    switch (chooseFormat(request, declared)) {
      case 'oauth':
        // RFC 6749 §5.2: an OAuth client understands 400 invalid_request for any malformed request.
        return reply
          .status(status === 415 ? 400 : status)
          .send({ error: answer.oauthError, error_description: description });
      case 'problem':
        return sendProblem(reply, status, answer.problemCode, description, answer.problemMembers);
      case 'html': {
        const look = options.looks.for(request);
        return sendErrorPage(
          reply,
          status,
          {
            look,
            title:
              request.routeOptions?.config?.errorPageTitle?.(look.t) ??
              look.t.statusTitles[status] ??
              TITLES[status] ??
              'Error',
            message: sentence(description),
          },
          options.pageHeaders,
        );
      }
    }
  };

  const handle = (
    error: FastifyError,
    request: FastifyRequest,
    reply: FastifyReply,
    declared: RouteErrorFormat,
  ) => {
    const answer = answerTo(error);
    if (answer === undefined) {
      request.log.error({ err: error }, 'unexpected error');
      return send(request, reply, UNEXPECTED, declared);
    }
    if (isIdgateError(error) && error.kind === 'storage_unavailable' && options.storageFailed !== undefined) {
      // An outage is logged once, when it starts (StorageHealth), not once per request.
      if (!options.storageFailed(error, request.log)) request.log.debug({ err: error }, 'request failed');
    } else if (answer.status >= 500) request.log.error({ err: error }, 'request failed');
    else if (error.cause !== undefined) request.log.warn({ err: error }, 'request refused');
    return send(request, reply, answer, declared);
  };

  return {
    // Fastify calls this outside any route (no hooks run): the route the URL would name decides.
    frameworkErrors(error, request, reply) {
      options.baseHeaders(request, reply);
      return handle(error, request, reply, formats.find(request.url)?.format ?? UNROUTED);
    },

    install(app) {
      app.addHook('onRoute', (route) => formats.add(route));
      app.setErrorHandler((error: FastifyError, request, reply) =>
        handle(error, request, reply, request.routeOptions.config.errorFormat ?? UNROUTED),
      );
      app.setNotFoundHandler((request, reply) => {
        const route = formats.find(request.url);
        if (route === undefined || route.methods.has(request.method)) {
          const path = request.url.split('?')[0] as string;
          return send(
            request,
            reply,
            {
              status: 404,
              description: `no route for ${request.method} ${path.slice(0, 256)}`,
              oauthError: 'invalid_request',
              problemCode: 'not_found',
            },
            route?.format ?? UNROUTED,
          );
        }
        const allowed = [...route.methods];
        return send(
          request,
          reply,
          {
            status: 405,
            description: `${request.method} is not allowed here; use ${allowed.join(' or ')}`,
            oauthError: 'invalid_request',
            problemCode: 'method_not_allowed',
            headers: { Allow: allowed.join(', ') },
          },
          route.format,
        );
      });
    },
  };
}
