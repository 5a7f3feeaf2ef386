import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request the fake upstream received, as it came over the wire. */
export interface RecordedRequest {
  method: string;
  /** Path without the query. */
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: string;
  /** The body read as application/x-www-form-urlencoded. */
  form: URLSearchParams;
}

/** What a route answers: JSON (`json`), a raw body (`raw`), or nothing ever (`hang`). */
export interface Reply {
  status?: number;
  headers?: Record<string, string>;
  json?: unknown;
  raw?: string;
  hang?: true;
}

export type Route = Reply | ((request: RecordedRequest, upstream: FakeUpstream) => Reply);

export interface FakeUpstream {
  /** `http://127.0.0.1:PORT`, no trailing slash. */
  readonly url: string;
  readonly requests: RecordedRequest[];
  /** Sets (or replaces) the answer to `METHOD /path`. */
  route(key: string, route: Route): void;
  /** The requests to one `METHOD /path`. */
  requestsTo(key: string): RecordedRequest[];
  /** Stops listening, ending every connection: connections to its port are refused until {@link up}. */
  down(): Promise<void>;
  /** Listens on the same port again (if it was down), with the same routes. */
  up(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The recorded body `fixtures/{name}.json`, freshly parsed (tests may change their copy).
 * @example const user = fixture('github-user');
 */
export function fixture<T = unknown>(name: string): T {
  return JSON.parse(readFileSync(new URL(`./fixtures/${name}.json`, import.meta.url), 'utf8')) as T;
}

/**
 * A real HTTP server on 127.0.0.1 (random port) that answers `METHOD /path` routes and records
 * every request. Unknown routes answer 404 as GitHub does.
 * @example const upstream = await startFakeUpstream({ 'GET /user': { json: fixture('github-user') } });
 */
export async function startFakeUpstream(routes: Record<string, Route> = {}): Promise<FakeUpstream> {
  const table = new Map(Object.entries(routes));
  const requests: RecordedRequest[] = [];
  let upstream: FakeUpstream | undefined;

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://fake');
      const body = Buffer.concat(chunks).toString('utf8');
      const recorded: RecordedRequest = {
        method: req.method ?? 'GET',
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        body,
        form: new URLSearchParams(body),
      };
      requests.push(recorded);
      const route = table.get(`${recorded.method} ${recorded.path}`);
      const reply: Reply =
        route === undefined
          ? { status: 404, json: { message: 'Not Found', documentation_url: 'https://docs.github.com/rest' } }
          : typeof route === 'function'
            ? route(recorded, upstream as FakeUpstream)
            : route;
      if (reply.hang) return;
      const payload = reply.raw ?? (reply.json === undefined ? '' : JSON.stringify(reply.json));
      const type = reply.raw === undefined ? 'application/json; charset=utf-8' : 'text/html; charset=utf-8';
      res.writeHead(reply.status ?? 200, { 'content-type': type, ...reply.headers });
      res.end(payload);
    });
  });
  const url = await listen(server);

  upstream = {
    url,
    requests,
    route: (key, route) => void table.set(key, route),
    requestsTo: (key) => requests.filter((request) => `${request.method} ${request.path}` === key),
    down: () => stop(server),
    up: () => listenOn(server, new URL(url).port),
    close: () => stop(server),
  };
  return upstream;
}

/**
 * The URL of a port on 127.0.0.1 nothing listens on (a server was there and closed).
 * @example const down = await closedPortUrl();
 */
export async function closedPortUrl(): Promise<string> {
  const server = createServer();
  const url = await listen(server);
  await stop(server);
  return url;
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function listenOn(server: Server, port: string): Promise<void> {
  if (server.listening) return;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(Number(port), '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
}

async function stop(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
}
