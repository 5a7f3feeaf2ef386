import { Username } from '@idgate/schema';
import { IdgateSdkError } from './errors.js';
import { type Call, httpError, networkError, type Parser, send, type TransportOptions } from './http.js';

/**
 * The key of the admin-call method every method of the admin client sends through (defined once,
 * on the root of its class chain). A symbol kept inside the package, so the method is neither
 * part of the client's API nor listed among its methods.
 */
export const ADMIN_CALL: unique symbol = Symbol('idgate admin call');

/**
 * The key of the method that opens a streamed admin response (server-sent events) with the API
 * key: `(path, headers, signal) => Response`, defined on the root of the admin client's chain.
 */
export const ADMIN_STREAM: unique symbol = Symbol('idgate admin stream');

/** Accepts any body: a 204 has none. */
export const NO_CONTENT: Parser<void> = { safeParse: () => ({ success: true, data: undefined }) };

/**
 * Sends a call of the admin API (`/admin/v1`) with `apiKey` as its Bearer credential, redacting
 * it and `secrets` from every error.
 * @example return adminSend(transport, apiKey, { method: 'GET', path: 'admin/v1/users', schema, schemaName: 'Page<User>' });
 */
export function adminSend<T>(
  transport: TransportOptions,
  apiKey: string,
  call: Omit<Call<T>, 'secrets'>,
  secrets: ReadonlyArray<string | undefined> = [],
): Promise<T> {
  return send(transport, {
    ...call,
    headers: { ...call.headers, authorization: `Bearer ${apiKey}` },
    secrets: [apiKey, ...secrets],
  });
}

/**
 * A GET of the admin API whose body is read as it arrives (server-sent events): the response once
 * its status is 200, the caller reading its body.
 * @throws IdgateHttpError (the problem in it) for any other status; IdgateSdkError naming the
 * server when there is no answer (a rejection of an aborted `signal` as it is).
 */
export async function adminStream(
  transport: TransportOptions,
  apiKey: string,
  path: string,
  headers: Record<string, string>,
  signal: AbortSignal | undefined,
): Promise<Response> {
  const url = new URL(path, transport.root);
  const endpoint = `GET ${url.pathname}`;
  let response: Response;
  let text: string;
  try {
    response = await (transport.fetch ?? fetch)(url, {
      headers: { ...transport.headers, ...headers, authorization: `Bearer ${apiKey}` },
      ...(signal === undefined ? {} : { signal }),
    });
    if (response.status === 200) return response;
    text = await response.text();
  } catch (error) {
    if (signal?.aborted) throw error;
    throw networkError(error, endpoint, transport, url, [apiKey]);
  }
  throw httpError(response, text, endpoint, [apiKey], false);
}

/**
 * `input` as a JSON request body.
 * @throws IdgateSdkError when it cannot be serialized (a cycle, a BigInt).
 */
export function jsonBody(input: unknown, endpoint: string): string {
  try {
    return JSON.stringify(input);
  } catch (error) {
    throw new IdgateSdkError('input must be serializable as JSON', { endpoint, cause: error });
  }
}

/** One page of a listing: `items` and the `nextCursor` to pass for the next page (null on the last). */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** The paging of a listing: at most `limit` items (1–500, server default 100), after `cursor`. */
export interface PageOptions {
  limit?: number;
  /** The `nextCursor` of the page before. */
  cursor?: string;
}

/**
 * The query string of the options that are set (`?limit=50&group=dev`), or '' when none is.
 * @example `admin/v1/users${queryString({ group: 'dev', limit: 50 })}`
 */
export function queryString(options: object): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(options)) if (value !== undefined) params.set(key, String(value));
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}

/**
 * A username as a path segment, checked first so that nothing like `..` can change the path.
 * @throws IdgateSdkError naming `endpoint` for anything that is not a username.
 */
export function usernameSegment(username: string, endpoint: string): string {
  if (typeof username !== 'string' || !Username.safeParse(username).success) {
    throw new IdgateSdkError(
      'username must be 1–128 letters, digits and . _ @ -, starting with a letter or digit',
      {
        endpoint,
      },
    );
  }
  return encodeURIComponent(username);
}
