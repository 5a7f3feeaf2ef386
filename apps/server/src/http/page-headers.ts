import type { ServerResponse } from 'node:http';
import helmet, { contentSecurityPolicy } from 'helmet';
import { isLoopbackHost } from './loopback.js';

/** The security headers of idgate's HTML pages, computed once from the issuer at start. */
export interface PageHeaders {
  /** Every header but the policy: the same on every page (names in lower case). */
  readonly fixed: Readonly<Record<string, string>>;
  /**
   * The Content-Security-Policy of a page whose forms may end in a redirect to `formRedirects`
   * (CSP sources besides `'self'`): the one computed at start when there are none.
   */
  policy(formRedirects: readonly string[]): string;
}

// What the pages load: one stylesheet and its images from idgate, one script from idgate (the
// passkey ceremony, `/oauth/assets/passkey.js`; no inline script), no font, no frame.
const DIRECTIVES = {
  defaultSrc: ["'none'"],
  baseUri: ["'none'"],
  fontSrc: null,
  formAction: ["'self'"],
  frameAncestors: ["'none'"],
  imgSrc: ["'self'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'self'"],
} as const;

/**
 * Runs a helmet middleware against a response that only records what it sets: helmet's
 * middlewares are `(req, res, next)` over Node's response, of which they call only `setHeader`
 * and `removeHeader` (what `removeHeader` removes, X-Powered-By, idgate never sends).
 */
function headersOf(
  middleware: (req: never, res: ServerResponse, next: (error?: unknown) => void) => void,
): Record<string, string> {
  const headers: Record<string, string> = {};
  let failure: unknown;
  const response = {
    setHeader(name: string, value: string) {
      headers[name.toLowerCase()] = String(value);
      return response;
    },
    removeHeader(name: string) {
      delete headers[name.toLowerCase()];
    },
  };
  middleware(undefined as never, response as unknown as ServerResponse, (error) => {
    failure = error;
  });
  if (failure !== undefined) throw failure;
  return headers;
}

/**
 * The headers of every HTML page (sign-in, consent, device, logout, error pages), taken from
 * helmet with idgate's policy: a CSP that allows only idgate's stylesheet and forms posting to
 * idgate, no framing (`frame-ancestors 'none'`, `X-Frame-Options: DENY`), no referrer, the
 * cross-origin isolation headers, and `Strict-Transport-Security` (one year, subdomains) when the
 * issuer is https on a host that is not loopback — browsers ignore it over http, and on a loopback
 * host it would pin every other local server to https. The JSON API keeps its own minimal headers:
 * helmet per request there (`@fastify/helmet`) cost +72 % instructions per warm TokenReview and
 * +147 % per discovery (bench/README.md).
 * @example const headers = pageHeaders('https://id.example.com/oauth'); reply.headers(headers.fixed)
 */
export function pageHeaders(issuer: string): PageHeaders {
  const url = new URL(issuer);
  const https = url.protocol === 'https:';
  const hsts = https && !isLoopbackHost(url.hostname);
  const csp = (formRedirects: readonly string[]) => ({
    directives: {
      ...DIRECTIVES,
      formAction: [...DIRECTIVES.formAction, ...formRedirects],
      // An https issuer's pages never load or post anything over http.
      upgradeInsecureRequests: https ? [] : null,
    },
  });
  const all = headersOf(
    helmet({
      contentSecurityPolicy: csp([]),
      strictTransportSecurity: hsts ? { maxAge: 31_536_000, includeSubDomains: true } : false,
      xFrameOptions: { action: 'deny' },
      referrerPolicy: { policy: 'no-referrer' },
    }),
  );
  const { 'content-security-policy': basePolicy, ...fixed } = all;
  if (basePolicy === undefined) throw new Error('helmet set no Content-Security-Policy');
  return {
    fixed,
    policy(formRedirects) {
      if (formRedirects.length === 0) return basePolicy;
      return headersOf(contentSecurityPolicy(csp(formRedirects)))['content-security-policy'] ?? basePolicy;
    },
  };
}
