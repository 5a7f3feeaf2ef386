import type { UpstreamOptions } from './http.js';
import { ConnectorError, type ConnectorFailure } from './types.js';

export { isRecord } from './http.js';

/** What a REST upstream answered: the status, headers and body text. */
export interface RestAnswer {
  status: number;
  headers: Headers;
  text: string;
}

/** A bearer token as RFC 6750 §2.1 spells it; anything else is refused before it travels. */
export const BEARER_TOKEN = /^[A-Za-z0-9\-._~+/]{1,4096}=*$/;

/** The upstream answered something other than what it documents. */
export function unexpected(name: string, what: string): never {
  throw new ConnectorError('invalid_upstream_response', `${name} answered the ${what} request unexpectedly`);
}

/** A non-empty string, or undefined. */
export function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/**
 * ` (error: description)` from an OAuth error body, for a user-facing message: only plain text,
 * at most 200 characters, and nothing that repeats a secret of the request.
 */
export function refusalDetail(body: unknown, secrets: string[]): string {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return '';
  const record = body as Record<string, unknown>;
  const clean = (value: unknown, max: number) => {
    if (typeof value !== 'string' || secrets.some((secret) => secret !== '' && value.includes(secret)))
      return '';
    const cut = value.length > max ? `${value.slice(0, max - 1)}…` : value;
    return /^[\p{L}\p{N}\p{P}\p{Zs}]+$/u.test(cut) ? cut : '';
  };
  const parts = [clean(record.error, 80), clean(record.error_description, 200)].filter((part) => part !== '');
  return parts.length > 0 ? ` (${parts.join(': ')})` : '';
}

/**
 * The HTTP side of a REST identity provider (GitHub, GitLab): one request at a time with a
 * timeout, no redirects followed (a token never goes to another host), and the upstream's failures
 * mapped to connector failures.
 */
export class RestUpstream {
  constructor(
    readonly name: string,
    private readonly options: UpstreamOptions,
    private readonly apiHeaders: Record<string, string> = { accept: 'application/json' },
  ) {}

  /** One request; no answer, a timeout, 5xx or 429 are `upstream_unavailable`. */
  async send(url: URL, init: RequestInit): Promise<RestAnswer> {
    let answer: RestAnswer;
    try {
      const response = await (this.options.fetch ?? globalThis.fetch)(url, {
        ...init,
        redirect: 'manual',
        signal: AbortSignal.timeout(this.options.timeoutMs ?? 10_000),
      });
      answer = { status: response.status, headers: response.headers, text: await response.text() };
    } catch (cause) {
      throw new ConnectorError('upstream_unavailable', `${this.name} did not answer`, { cause });
    }
    if (answer.status >= 500 || answer.status === 429) {
      throw new ConnectorError('upstream_unavailable', `${this.name} is unavailable (HTTP ${answer.status})`);
    }
    return answer;
  }

  /** An API GET with the token; 401 (a token the upstream does not accept) is `refused`. */
  async apiGet(url: URL, accessToken: string, refused: ConnectorFailure): Promise<RestAnswer> {
    const answer = await this.send(url, {
      headers: { ...this.apiHeaders, authorization: `Bearer ${accessToken}` },
    });
    if (answer.status === 401)
      throw new ConnectorError(refused, `${this.name} did not accept the access token`);
    return answer;
  }

  /** The JSON body of a 200 answer; any other status is `upstream_error`. */
  checkedBody(answer: RestAnswer, what: string): unknown {
    if (answer.status !== 200) {
      throw new ConnectorError(
        'upstream_error',
        `${this.name} refused the ${what} request (HTTP ${answer.status})`,
      );
    }
    return this.parseJson(answer.text, what);
  }

  parseJson(body: string, what: string): unknown {
    let value: unknown;
    try {
      value = JSON.parse(body);
    } catch {
      // No cause: a JSON.parse error quotes the body, which may hold a token.
      throw new ConnectorError(
        'invalid_upstream_response',
        `${this.name} answered the ${what} request with no JSON`,
      );
    }
    return value;
  }
}

/** JSON.parse that answers undefined instead of throwing (an error's message would quote the body). */
export function safeJson(body: string): unknown {
  try {
    return JSON.parse(body) as unknown;
  } catch {
    return undefined;
  }
}
