import type { UpstreamSchema } from '@idgate/schema';
import { ConnectorError, type ConnectorFailure } from './types.js';

/** How a connector reaches its upstream. */
export interface UpstreamOptions {
  /** The `fetch` that calls the upstream; `globalThis.fetch` by default. */
  fetch?: typeof fetch;
  /** How long each request may take, body included, in milliseconds (10 s by default). */
  timeoutMs?: number;
}

/** A request's options; oauth4webapi's `customFetch` passes absent ones as undefined. */
type UpstreamRequest = { [K in keyof RequestInit]?: RequestInit[K] | undefined };

/** A compact JWS: an ID token or a JWT access token an upstream echoed back. */
const JWT = /eyJ[\w-]+\.[\w-]*\.[\w-]*/;
/** Text safe to put in a message shown to a person: no control characters, no markup. */
const PLAIN = /^[^\p{C}<>]+$/u;
/** Statuses whose Response cannot carry a body (Fetch standard, "null body status"). */
const NULL_BODY = [204, 205, 304];

/**
 * The one redaction rule for text an upstream or a library wrote (an OAuth error description, a
 * validation or network error): plain text cut to `max` characters, or nothing at all when it
 * holds one of `secrets` or a JWT. Dropped whole rather than masked, as a cut could leave half a
 * secret.
 */
export function redact(text: unknown, secrets: readonly string[], max = 200): string {
  if (typeof text !== 'string' || !PLAIN.test(text) || JWT.test(text)) return '';
  if (secrets.some((secret) => secret !== '' && text.includes(secret))) return '';
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/**
 * A cause fit for the logs: the name, code and redacted message of each error in the chain, and
 * nothing else. A library error's own fields can hold a response body, claims or the request's
 * parameters (tokens, the code); JSON.parse's message quotes the body it choked on.
 */
function describe(error: unknown, secrets: readonly string[]): Error {
  const parts: string[] = [];
  for (let link = error; link instanceof Error && parts.length < 4; link = link.cause) {
    const code = 'code' in link && typeof link.code === 'string' ? ` ${link.code}` : '';
    const message = link instanceof SyntaxError ? '' : redact(link.message, secrets);
    parts.push(`${link.name}${code}: ${message || '(withheld)'}`);
  }
  return new Error(parts.join(' <- ') || 'an unknown failure');
}

/**
 * The seconds to wait from a Retry-After header, either delay-seconds or an HTTP-date
 * (RFC 9110 §10.2.3); undefined when absent, unreadable or already past.
 */
function retryAfter(headers: Headers): number | undefined {
  const value = headers.get('retry-after')?.trim() ?? '';
  const seconds = /^\d{1,9}$/.test(value)
    ? Number(value)
    : Math.ceil((Date.parse(value) - Date.now()) / 1000);
  return Number.isFinite(seconds) && seconds > 0 ? seconds : undefined;
}

/**
 * The HTTP side of every connector: a timeout that covers the body, no redirect followed (a token
 * never goes to another host), one rule for an upstream that cannot serve, and one redaction rule
 * for what reaches a message or a cause.
 */
export class Upstream {
  readonly #fetch: typeof fetch;
  readonly #timeoutMs: number;

  /** `secrets` (the client secret) are redacted from every failure besides each request's own. */
  constructor(
    readonly name: string,
    options: UpstreamOptions,
    private readonly secrets: readonly string[],
  ) {
    this.#fetch = options.fetch ?? globalThis.fetch;
    this.#timeoutMs = options.timeoutMs ?? 10_000;
  }

  /** A ConnectorError whose cause is described without `secrets` or the connector's own. */
  error(failure: ConnectorFailure, message: string, cause?: unknown, secrets: readonly string[] = []) {
    const all = [...this.secrets, ...secrets];
    return new ConnectorError(
      failure,
      message,
      cause === undefined ? undefined : { cause: describe(cause, all) },
    );
  }

  /**
   * ` (error: description)` of an OAuth error answer (RFC 6749 §5.2), redacted, for a message
   * such as "refused the sign-in".
   */
  detail(refusal: { error?: unknown; error_description?: unknown } | undefined, secrets: readonly string[]) {
    const all = [...this.secrets, ...secrets];
    const parts = [redact(refusal?.error, all, 80), redact(refusal?.error_description, all)];
    const said = parts.filter((part) => part !== '').join(': ');
    return said === '' ? '' : ` (${said})`;
  }

  /**
   * `fetch` under the one rule: no answer or a timeout, 429 and 5xx are `upstream_unavailable`,
   * with the wait a Retry-After asks for in the message (GitHub also sends its secondary rate
   * limit as 403 with Retry-After). Nothing is retried here: a retry inside a sign-in would not
   * wait as asked, and a 429 may concern only the one user's token. Also oauth4webapi's
   * `customFetch`; the body is read within the timeout, so the answer is whole.
   */
  readonly fetch = async (url: string | URL, init: UpstreamRequest = {}): Promise<Response> => {
    let answer: Response;
    let body: ArrayBuffer;
    try {
      const request = { ...init, redirect: 'manual', signal: AbortSignal.timeout(this.#timeoutMs) };
      answer = await this.#fetch(url, request as RequestInit);
      body = await answer.arrayBuffer();
    } catch (cause) {
      throw this.error('upstream_unavailable', `${this.name} did not answer`, cause);
    }
    const { status, statusText, headers } = answer;
    const wait = retryAfter(headers);
    if (status === 429 || status >= 500 || (status === 403 && wait !== undefined)) {
      const then = wait === undefined ? '' : `; try again in ${wait} seconds`;
      throw this.error('upstream_unavailable', `${this.name} is unavailable (HTTP ${status})${then}`);
    }
    // Opaque redirects (status 0) are what `redirect: 'manual'` gives in browsers and workers.
    if (status < 200) throw this.error('invalid_upstream_response', `${this.name} answered with a redirect`);
    return new Response(NULL_BODY.includes(status) ? null : body, { status, statusText, headers });
  };

  /** A GET with the access token; 401 (the upstream does not take the token) is `refused`. */
  async get(url: URL, accessToken: string, refused: ConnectorFailure, headers: Record<string, string>) {
    const answer = await this.fetch(url, { headers: { ...headers, authorization: `Bearer ${accessToken}` } });
    if (answer.status === 401) throw this.error(refused, `${this.name} did not accept the access token`);
    return answer;
  }

  /** The body of a 200 answer to the `what` request, through `schema`; other statuses are `upstream_error`. */
  async read<T>(answer: Response, what: string, schema: UpstreamSchema<T>, secrets: readonly string[] = []) {
    if (answer.status !== 200)
      throw this.error('upstream_error', `${this.name} refused the ${what} request (HTTP ${answer.status})`);
    return this.parse(await this.json(answer, what), what, schema, secrets);
  }

  /** The JSON of an answer; not JSON is `invalid_upstream_response`. */
  async json(answer: Response, what: string): Promise<unknown> {
    try {
      return JSON.parse(await answer.text());
    } catch {
      throw this.error('invalid_upstream_response', `${this.name} answered the ${what} request with no JSON`);
    }
  }

  /** `body` through `schema`, or `invalid_upstream_response` naming the first thing amiss. */
  parse<T>(body: unknown, what: string, schema: UpstreamSchema<T>, secrets: readonly string[] = []): T {
    const parsed = schema.safeParse(body);
    if (parsed.success) return parsed.data;
    const issue = parsed.error.issues[0];
    const where = issue === undefined || issue.path.length === 0 ? 'body' : issue.path.map(String).join('.');
    const problem = redact(`${where}: ${issue?.message ?? 'unexpected'}`, [...this.secrets, ...secrets]);
    throw this.error(
      'invalid_upstream_response',
      `${this.name} answered the ${what} request unexpectedly${problem === '' ? '' : ` (${problem})`}`,
    );
  }
}
