import type { FastifyInstance, InjectOptions } from 'fastify';

/**
 * Every route of `app` as [method, path], walked from its router so that a route added later is
 * covered by the suites that use this without anyone remembering to add it (HEAD routes fastify
 * adds for GET are left out).
 * @example for (const [method, path] of registeredRoutes(app)) await app.inject({ method, url: path });
 */
export function registeredRoutes(app: FastifyInstance): Array<[string, string]> {
  const routes: Array<[string, string]> = [];
  const prefixes: string[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const match = /^((?:[│ ] {3})*)[├└]── (.*?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (match === null) continue;
    const depth = (match[1] ?? '').length / 4;
    const path = (prefixes[depth - 1] ?? '') + (match[2] ?? '');
    prefixes[depth] = path;
    prefixes.length = depth + 1;
    for (const method of (match[3] ?? '').split(', ').filter((m) => m !== '' && m !== 'HEAD'))
      routes.push([method, path]);
  }
  return routes;
}

/** What {@link injectOnce} answers: the status, headers and the body read. */
export interface InjectedAnswer {
  statusCode: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
}

/**
 * `app.inject(options)`, also for a route that streams (server-sent events): the answer is read to
 * its end, or, for `text/event-stream`, up to its first chunk, after which the stream is dropped,
 * as a walker of every route cannot wait for a live tail to end.
 * @example const { statusCode, body } = await injectOnce(app, { method: 'GET', url: '/admin/v1/events/stream' });
 */
export async function injectOnce(app: FastifyInstance, options: InjectOptions): Promise<InjectedAnswer> {
  const abort = new AbortController();
  const response = await app.inject({ ...options, payloadAsStream: true, signal: abort.signal });
  const stream = response.stream();
  const streaming = String(response.headers['content-type'] ?? '').startsWith('text/event-stream');
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of stream) {
      chunks.push(Buffer.from(chunk as Uint8Array));
      if (streaming) break;
    }
  } finally {
    if (streaming) abort.abort();
  }
  return {
    statusCode: response.statusCode,
    headers: response.headers,
    body: Buffer.concat(chunks).toString(),
  };
}
