import { OAuthError, Problem } from '@idgate/schema';
import ky, { isHTTPError, isTimeoutError } from 'ky';
import { formUrlEncode } from './encoding.js';
import {
  IdgateHttpError,
  IdgateRedirectError,
  IdgateSchemaError,
  IdgateSdkError,
  redact,
  type SchemaIssue,
} from './errors.js';
import type { IdgateClientOptions } from './types.js';
import { serverRoot } from './urls.js';

/** Anything with zod's `safeParse` (every schema of `@idgate/schema`). */
export interface Parser<T> {
  safeParse(
    input: unknown,
  ): { success: true; data: T } | { success: false; error: { issues: SchemaIssue[] } };
}

/** Transport settings shared by every request of one client. */
export interface TransportOptions {
  root: URL;
  fetch: typeof fetch | undefined;
  timeoutMs: number;
  retry: number;
  headers: Record<string, string>;
  /** What messages call the server (`cannot reach idgate at …`); `idgate` when not set. */
  peer?: string;
}

/** One request: where, what, and how to check the answer. */
export interface Call<T> {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path relative to the server root, without a leading slash (e.g. `oauth/token`). */
  path: string;
  schema: Parser<T>;
  schemaName: string;
  headers?: Record<string, string>;
  body?: string;
  /** Values that must never appear in an error message. */
  secrets: ReadonlyArray<string | undefined>;
  /**
   * The endpoint is an RFC 6750 protected resource accessed with the caller's Bearer token: on an
   * error without an OAuth error body, read `error` and `error_description` from the
   * `WWW-Authenticate: Bearer` challenge (RFC 6750 §3) into {@link IdgateHttpError.oauthError}.
   */
  bearerChallenge?: boolean;
  /**
   * Do not follow a redirect: a 3xx answer rejects with an {@link IdgateRedirectError} carrying
   * `redirectHint` in its message.
   */
  redirectHint?: string;
  /** Overrides the client's `retry` (e.g. `0` for a request that must not be sent twice). */
  retry?: number;
}

const MAX_DETAIL = 200;
const DEFAULT_TIMEOUT_MS = 10_000;

/**
 * The transport of a client created with `options` (the connection options both
 * `createIdgateClient` and `createIdgateAdminClient` take), checked.
 * @throws {IdgateSdkError} when `baseUrl` is not an absolute http(s) URL, or `timeoutMs`/`retry` is invalid.
 */
export function createTransport(options: Omit<IdgateClientOptions, 'apiKey'>): TransportOptions {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const retry = options.retry ?? 0;
  if (!Number.isInteger(timeoutMs) || timeoutMs <= 0 || timeoutMs > 2_147_483_647) {
    throw new IdgateSdkError('timeoutMs must be a positive integer number of milliseconds');
  }
  if (!Number.isInteger(retry) || retry < 0) throw new IdgateSdkError('retry must be a non-negative integer');
  return {
    root: serverRoot(options.baseUrl),
    fetch: options.fetch,
    timeoutMs,
    retry,
    headers: { ...options.headers },
  };
}

/** Sends `call`, maps failures to {@link IdgateSdkError}s and validates a 2xx body with `call.schema`. */
export async function send<T>(transport: TransportOptions, call: Call<T>): Promise<T> {
  const secrets = call.secrets.flatMap(secretForms);
  const url = new URL(call.path, transport.root);
  const endpoint = `${call.method} ${url.pathname}`;
  const headers = new Headers({ accept: 'application/json' });
  for (const [name, value] of Object.entries({ ...transport.headers, ...call.headers })) {
    try {
      headers.set(name, value);
    } catch (error) {
      // the runtime's message quotes the value, which may be a token: name the header only
      throw new IdgateSdkError(
        `${endpoint} failed: the value of header "${name}" is not a valid header value`,
        {
          endpoint,
          cause: new TypeError(redact(error instanceof Error ? error.message : String(error), secrets)),
        },
      );
    }
  }

  let response: Response;
  let text: string;
  try {
    try {
      response = await ky(url, {
        method: call.method,
        headers,
        ...(call.body === undefined ? {} : { body: call.body }),
        timeout: transport.timeoutMs,
        retry: { limit: call.retry ?? transport.retry },
        ...(call.redirectHint === undefined ? {} : { redirect: 'manual' as const }),
        ...(transport.fetch === undefined ? {} : { fetch: transport.fetch }),
      });
    } catch (error) {
      if (!isHTTPError(error)) throw error;
      response = error.response;
    }
    text = await response.text();
  } catch (error) {
    throw networkError(error, endpoint, transport, url, secrets);
  }

  if (call.redirectHint !== undefined && isRedirect(response)) {
    throw new IdgateRedirectError(`${endpoint} answered a redirect: ${call.redirectHint}`, {
      endpoint,
      status: response.status,
      location: redirectTarget(response.headers.get('location'), url),
    });
  }
  if (!response.ok) throw httpError(response, text, endpoint, secrets, call.bearerChallenge === true);

  const json = parseJson(text);
  const result = call.schema.safeParse(json ?? text);
  if (result.success) return result.data;
  const issues = result.error.issues;
  // a proxy's or a web server's page, not an answer of the API: say so rather than list zod's issues
  if (json === undefined)
    throw new IdgateSchemaError(redact(notJson(endpoint, response, text), secrets), {
      endpoint,
      status: response.status,
      issues,
    });
  const summary = issues
    .slice(0, 3)
    .map((issue) => `${issue.path.map(String).join('.') || '(root)'}: ${issue.message}`)
    .join('; ');
  const more = issues.length > 3 ? ` (and ${issues.length - 3} more)` : '';
  throw new IdgateSchemaError(
    `${endpoint} returned a response that does not match ${call.schemaName}: ${redact(summary, secrets)}${more}`,
    { endpoint, status: response.status, issues },
  );
}

/** A 3xx answer, or what a browser's fetch shows of one under `redirect: 'manual'` (status 0). */
function isRedirect(response: Response): boolean {
  return response.type === 'opaqueredirect' || (response.status >= 300 && response.status < 400);
}

/** The `Location` of a redirect resolved against the request URL, as given when it does not parse. */
function redirectTarget(location: string | null, base: URL): string | undefined {
  if (location === null) return undefined;
  try {
    return new URL(location, base).href;
  } catch {
    return location;
  }
}

/** A secret as it may be echoed back: verbatim, form-urlencoded, percent-encoded or JSON-escaped. */
function secretForms(secret: string | undefined): string[] {
  if (!secret) return [];
  return [secret, formUrlEncode(secret), encodeURIComponent(secret), JSON.stringify(secret).slice(1, -1)];
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The {@link IdgateHttpError} of a non-2xx answer: the OAuth error or problem in it, or what it was instead. */
export function httpError(
  response: Response,
  text: string,
  endpoint: string,
  secrets: ReadonlyArray<string | undefined>,
  bearerChallenge: boolean,
): IdgateHttpError {
  const contentType = response.headers.get('content-type') ?? '';
  const isJson = /^application\/([\w.-]+\+)?json\s*(;|$)/i.test(contentType);
  const json = isJson ? parseJson(text) : undefined;
  const body = json === undefined ? text : json;
  const oauth = OAuthError.safeParse(body);
  const problem = Problem.safeParse(body);
  const oauthError = oauth.success
    ? oauth.data
    : bearerChallenge
      ? challengeError(response.headers.get('www-authenticate'))
      : undefined;
  const problemDetails = problem.success ? problem.data : undefined;

  let detail: string;
  if (json === undefined && text.trim() !== '' && !oauthError) {
    return new IdgateHttpError(redact(notJson(endpoint, response, text), secrets), {
      endpoint,
      status: response.status,
      body,
      headers: response.headers,
      oauthError,
      problem: undefined,
    });
  }
  if (oauthError) {
    detail = oauthError.error + (oauthError.error_description ? ` (${oauthError.error_description})` : '');
  } else if (problemDetails) {
    detail = `${problemDetails.code} (${problemDetails.detail ?? problemDetails.title})`;
  } else {
    const raw = (typeof body === 'string' ? body : JSON.stringify(body)).replace(/\s+/g, ' ').trim();
    detail =
      raw.length > MAX_DETAIL ? `${raw.slice(0, MAX_DETAIL)}…` : raw || response.statusText || 'no body';
  }
  return new IdgateHttpError(`${endpoint} failed with ${response.status}: ${redact(detail, secrets)}`, {
    endpoint,
    status: response.status,
    body,
    headers: response.headers,
    oauthError,
    problem: problemDetails,
  });
}

/**
 * `expected JSON from GET /path, got text/html (status 502)`: an answer that is not JSON, with the
 * title of an HTML page or the start of a text, which say more than a schema's complaint would.
 */
function notJson(endpoint: string, response: Response, text: string): string {
  const type = response.headers.get('content-type')?.split(';')[0]?.trim() || 'no content type';
  const said = /html/i.test(type)
    ? /<title[^>]*>([^<]*)/i.exec(text)?.[1]
    : /json/i.test(type)
      ? 'a body that does not parse'
      : text;
  const detail = (said ?? '').replace(/\s+/g, ' ').trim();
  const shown = detail.length > MAX_DETAIL ? `${detail.slice(0, MAX_DETAIL)}…` : detail;
  return `expected JSON from ${endpoint}, got ${type} (status ${response.status})${shown ? `: ${shown}` : ''}`;
}

/**
 * A request that got no answer: `GET /oauth/keys failed: cannot reach idgate at https://host:8443:
 * ECONNREFUSED`, naming the server (its origin: never credentials) and the system's reason.
 */
export function networkError(
  error: unknown,
  endpoint: string,
  transport: TransportOptions,
  url: URL,
  secrets: ReadonlyArray<string | undefined>,
): IdgateSdkError {
  if (error instanceof IdgateSdkError) return error;
  const server = `${transport.peer ?? 'idgate'} at ${url.origin}`;
  let reason: string;
  if (isTimeoutError(error)) {
    reason = `${server} did not answer within ${transport.timeoutMs} ms`;
  } else {
    // fetch's TypeError says "fetch failed"; its cause says why (ECONNREFUSED, ENOTFOUND, a TLS error)
    const cause =
      error instanceof Error ? (error.cause as { code?: unknown; message?: unknown } | undefined) : undefined;
    const code = typeof cause?.code === 'string' ? cause.code : undefined;
    const message =
      typeof cause?.message === 'string'
        ? cause.message
        : error instanceof Error
          ? error.message
          : String(error);
    const why =
      code === undefined ? message : !message || message.includes(code) ? code : `${message} (${code})`;
    reason = `cannot reach ${server}: ${why}`;
  }
  return new IdgateSdkError(`${endpoint} failed: ${redact(reason, secrets)}`, { endpoint, cause: error });
}

/** The RFC 6750 §3 error of a `WWW-Authenticate` header's Bearer challenge, when it has one. */
function challengeError(header: string | null): OAuthError | undefined {
  const params = header === null ? undefined : bearerChallengeParams(header);
  if (params?.error === undefined) return undefined;
  const error: Record<string, string> = { error: params.error };
  if (params.error_description !== undefined) error.error_description = params.error_description;
  if (params.error_uri !== undefined) error.error_uri = params.error_uri;
  const parsed = OAuthError.safeParse(error);
  return parsed.success ? parsed.data : undefined;
}

const TOKEN = /[!#$%&'*+.^_`|~0-9A-Za-z-]+/y;
const TOKEN68 = /[A-Za-z0-9._~+/-]+=*[ \t]*(?=,|$)/y;
const SEPARATORS = /[ \t,]*/y;
const OWS = /[ \t]*/y;

/**
 * The auth-params of the first `Bearer` challenge of a `WWW-Authenticate` value (RFC 9110 §11.6.1,
 * RFC 6750 §3), names lower-cased, values unquoted; `undefined` when there is no Bearer challenge.
 * Copes with several challenges in one value, token68 credentials and malformed parts.
 * @example bearerChallengeParams('Basic realm="a", Bearer error="invalid_token"') // { error: 'invalid_token' }
 */
export function bearerChallengeParams(header: string): Record<string, string> | undefined {
  const challenges: Array<{ scheme: string; params: Record<string, string> }> = [];
  let i = 0;
  const match = (pattern: RegExp): string | undefined => {
    pattern.lastIndex = i;
    const found = pattern.exec(header);
    if (found) i = pattern.lastIndex;
    return found?.[0];
  };
  const skipPastComma = () => {
    const comma = header.indexOf(',', i);
    i = comma === -1 ? header.length : comma + 1;
  };
  while (match(SEPARATORS) !== undefined && i < header.length) {
    const token = match(TOKEN);
    if (token === undefined) {
      skipPastComma();
      continue;
    }
    match(OWS);
    const current = challenges.at(-1);
    if (header[i] !== '=') {
      challenges.push({ scheme: token.toLowerCase(), params: {} });
      match(OWS);
      match(TOKEN68);
      continue;
    }
    i += 1;
    match(OWS);
    const value = header[i] === '"' ? quotedString() : match(TOKEN);
    if (value === undefined || current === undefined) {
      skipPastComma();
      continue;
    }
    const name = token.toLowerCase();
    // a parameter name must occur once per challenge (RFC 9110 §11.2): keep the first
    if (!Object.hasOwn(current.params, name)) current.params[name] = value;
  }
  return challenges.find((challenge) => challenge.scheme === 'bearer')?.params;

  function quotedString(): string {
    let value = '';
    for (i += 1; i < header.length; i += 1) {
      const char = header[i];
      if (char === '"') {
        i += 1;
        break;
      }
      if (char === '\\' && i + 1 < header.length) i += 1;
      value += header[i];
    }
    return value;
  }
}
