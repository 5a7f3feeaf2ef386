import { readFileSync } from 'node:fs';
import { type AuditEvent, AuditEventPage } from '@idgate/schema';
import type { TestServer } from '../helpers/server.js';

/**
 * The audit events `GET /admin/v1/events` lists for `query` (every page), as an operator reads
 * them over HTTP.
 */
export async function listedEvents(
  t: TestServer,
  adminKey: string,
  query: Record<string, string | string[]> = {},
): Promise<AuditEvent[]> {
  const events: AuditEvent[] = [];
  let cursor: string | null = null;
  do {
    const params = new URLSearchParams({ limit: '200' });
    for (const [name, value] of Object.entries(query))
      for (const one of Array.isArray(value) ? value : [value]) params.append(name, one);
    if (cursor !== null) params.set('cursor', cursor);
    const response = await fetch(`${t.baseUrl}/admin/v1/events?${params}`, {
      headers: { authorization: `Bearer ${adminKey}` },
    });
    if (response.status !== 200) throw new Error(`events: ${response.status} ${await response.text()}`);
    const page = AuditEventPage.parse(await response.json());
    events.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor !== null);
  return events;
}

/** The events the server wrote to its JSON-lines stream (`audit.log`), each line parsed as it is. */
export function streamedEvents(t: TestServer): Record<string, unknown>[] {
  const file = t.server.services.config.audit.log;
  if (file === 'off' || file === 'stdout' || file === 'stderr') throw new Error(`audit.log is ${file}`);
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** A request to the admin API with `adminKey`, JSON in and out, with extra `headers`. */
export function adminRequest(t: TestServer, adminKey: string) {
  return (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    fetch(`${t.baseUrl}/admin/v1/${path}`, {
      method,
      headers: {
        authorization: `Bearer ${adminKey}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
}

/** The token endpoint of `t` for a confidential client, form in, status and JSON out. */
export function tokenEndpoint(t: TestServer, client: { clientId: string; clientSecret: string }) {
  const basic = `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}`;
  return async (form: Record<string, string>, headers: Record<string, string> = {}) => {
    const response = await fetch(`${t.issuer}/token`, {
      method: 'POST',
      headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams(form),
    });
    return { status: response.status, body: (await response.json()) as Record<string, string> };
  };
}

/** `fetch` that adds `headers` to every request (a browser's user agent, a caller's trace). */
export const withHeaders =
  (headers: Record<string, string>): typeof fetch =>
  (input, init) =>
    fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), ...headers } });
