import type { FastifyReply } from 'fastify';
import type { PageHeaders } from '../http/page-headers.js';
import type { ResponseDoc, RouteDoc } from '../openapi/route-doc.js';
import type { PageLook } from './look.js';
import { messagePage } from './views/message.js';

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * The CSP sources (CSP3 §2.3.1) that let a form's answer redirect the browser to `uris`: a
 * page's forms post to idgate, which may answer with a redirect to the client (the code, or the
 * end of a sign-out), and browsers check `form-action` against that redirect too. An https URI
 * gives its origin; a loopback http URI any port of that host (native apps listen on a port of
 * their choosing, RFC 8252 §7.3); a private-use scheme (`com.example.app:/cb`) the scheme.
 * Anything else gives nothing.
 * @example formActionSources(['https://app.example.com/cb']) // ['https://app.example.com']
 */
export function formActionSources(uris: ReadonlyArray<string | undefined>): string[] {
  const sources = new Set<string>();
  for (const uri of uris) {
    if (uri === undefined || !URL.canParse(uri)) continue;
    const url = new URL(uri);
    if (url.protocol === 'https:') sources.add(url.origin);
    else if (url.protocol === 'http:' && LOOPBACK.has(url.hostname)) sources.add(`http://${url.hostname}:*`);
    else if (url.protocol !== 'http:' && /^[a-z][a-z0-9+.-]*:$/.test(url.protocol)) sources.add(url.protocol);
  }
  return [...sources];
}

/** What a page's forms may lead to besides idgate itself. */
export interface PageOptions {
  /** Where a form's answer may redirect the browser (see {@link formActionSources}). */
  formRedirects?: ReadonlyArray<string | undefined>;
  /** The pages' headers; by default the server's (`app.pageHeaders`), which a framework error's reply cannot reach. */
  headers?: PageHeaders;
}

/**
 * Sends an HTML page with the headers every page gets: no caching (pages carry CSRF tokens), and
 * the security headers taken from helmet at start (`app.pageHeaders`, see `pageHeaders`): no
 * framing (clickjacking on the login and consent forms), no referrer (URLs carry interaction ids),
 * a policy that allows only our stylesheet, and forms that post only to idgate and may end in a
 * redirect only to the client the flow belongs to (`form-action`).
 */
export function sendPage(
  reply: FastifyReply,
  status: number,
  body: string,
  options: PageOptions = {},
): FastifyReply {
  const headers = options.headers ?? reply.server.pageHeaders;
  return reply
    .status(status)
    .type('text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .headers(headers.fixed)
    .header('content-security-policy', headers.policy(formActionSources(options.formRedirects ?? [])))
    .send(body);
}

/** Route options of a page a browser navigates to: its errors are pages too. */
export const PAGE_ROUTE = { config: { errorFormat: 'html' } } as const;

/**
 * {@link PAGE_ROUTE} with the page's OpenAPI description (tag `pages`; the browser's session
 * cookie, when there is one, by default).
 * @example app.get('/oauth/login', pageRoute({ operationId: 'getLoginPage', summary: 'The login page', responses: { 200: PAGE } }), handler)
 */
export function pageRoute(doc: Omit<RouteDoc, 'tags'> & { tags?: RouteDoc['tags'] }): {
  config: { errorFormat: 'html'; doc: RouteDoc };
} {
  return {
    config: {
      errorFormat: 'html',
      doc: { tags: ['pages'], security: ['browserSession', 'anonymous'], ...doc },
    },
  };
}

/** Answers of the pages, for their descriptions. */
export const PAGE_ANSWERS = {
  page: (description: string): ResponseDoc => ({ description, html: true }),
  redirect: (description: string): ResponseDoc => ({
    description,
    headers: { Location: 'where the browser goes next' },
  }),
  error: (description: string): ResponseDoc => ({ description, html: true }),
} as const;

/** Sends a page that shows an error to the person in front of the browser. */
export function sendErrorPage(
  reply: FastifyReply,
  status: number,
  page: { look: PageLook; title: string; message: string },
  headers?: PageHeaders,
): FastifyReply {
  return sendPage(
    reply,
    status,
    messagePage({ ...page, alert: true, requestId: reply.request.id }),
    headers === undefined ? {} : { headers },
  );
}
