import { ConnectorError } from './types.js';

/** How connectors reach their upstream. */
export interface UpstreamOptions {
  fetch?: typeof fetch;
  /** Per request (default 10 s). */
  timeoutMs?: number;
}

/**
 * One upstream HTTP call with a timeout, answering parsed JSON. Network failures, timeouts and
 * 5xx are `upstream_unavailable`; a body that is not JSON is `invalid_upstream_response`. Other
 * statuses are the caller's to judge (`status` is returned with the body).
 */
export async function upstreamJson(
  upstream: string,
  url: string | URL,
  init: RequestInit,
  options: UpstreamOptions,
): Promise<{ status: number; body: unknown; headers: Headers }> {
  let response: Response;
  try {
    response = await (options.fetch ?? globalThis.fetch)(url, {
      ...init,
      redirect: 'manual',
      signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
    });
  } catch (cause) {
    throw new ConnectorError('upstream_unavailable', `${upstream} did not answer`, { cause });
  }
  if (response.status >= 500) {
    throw new ConnectorError(
      'upstream_unavailable',
      `${upstream} answered with an error (${response.status})`,
    );
  }
  const text = await response.text().catch((cause: unknown) => {
    throw new ConnectorError('upstream_unavailable', `${upstream} did not answer`, { cause });
  });
  let body: unknown;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch (cause) {
    throw new ConnectorError('invalid_upstream_response', `${upstream} did not answer with JSON`, { cause });
  }
  return { status: response.status, body, headers: response.headers };
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A plain-text upstream error description, cut short, for a user-facing message. */
export function upstreamDescription(body: unknown): string {
  if (!isRecord(body)) return '';
  const error = typeof body.error === 'string' ? body.error : '';
  const description = typeof body.error_description === 'string' ? body.error_description : '';
  const text = [error, description].filter((part) => part !== '').join(': ');
  return /^[\x20-\x7e]{1,200}$/.test(text) ? ` (${text})` : '';
}
