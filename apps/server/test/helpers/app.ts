import { STATUS_CODES } from 'node:http';
import { Readable } from 'node:stream';
import type { Clock } from '@idgate/core';
import type { FastifyInstance } from 'fastify';
import type { IdgateConfigInput } from '../../src/config.js';
import { type ComposedServer, composeServer } from '../../src/serve.js';
import type { TestDatabaseKind } from './databases.js';
import { startHarness, type TestHarness } from './harness.js';
import { registerResponseSecrets, registerSecret } from './run-record.js';

export { testClock } from './harness.js';

/** Where a {@link TestApp} claims to be: nothing listens there, requests go through `inject()`. */
export const TEST_ORIGIN = 'http://idgate.test';

/**
 * idgate composed in this process over a fresh database, not listening: route tests talk to it
 * through {@link TestApp.fetch}, which has the global fetch's signature and answers with a real
 * `Response` built from `app.inject()`.
 */
export interface TestApp extends TestHarness {
  server: ComposedServer;
  app: FastifyInstance;
  services: ComposedServer['services'];
  /** {@link TEST_ORIGIN} */
  baseUrl: string;
  /** `fetch` for URLs under {@link TEST_ORIGIN}, through `app.inject()`. */
  fetch: typeof fetch;
}

export async function startTestApp(
  kind: TestDatabaseKind,
  overrides: IdgateConfigInput = {},
  options: { clock?: Clock } = {},
): Promise<TestApp> {
  const harness = await startHarness(
    kind,
    { issuer: `${TEST_ORIGIN}/oauth`, overrides, ...options },
    async (config, composeOptions) => {
      const composed = await composeServer(config, composeOptions);
      await composed.app.ready();
      return composed;
    },
  );
  const { app, services } = harness.server;
  return { ...harness, app, services, baseUrl: TEST_ORIGIN, fetch: injectFetch(app) };
}

/**
 * Registers what a response hands out (tokens, codes, client secrets, API keys) for the run's
 * secret scan: JSON bodies are read from a clone (never a stream: a live tail does not end).
 */
function registerIssued(response: Response): void {
  const location = response.headers.get('location');
  if (location?.includes('code=')) {
    registerSecret(
      'authorization code',
      new URL(location, TEST_ORIGIN).searchParams.get('code') ?? undefined,
    );
  }
  if (response.body !== null && response.headers.get('content-type')?.startsWith('application/json')) {
    response
      .clone()
      .json()
      .then(registerResponseSecrets, () => {});
  }
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const NULL_BODY = new Set([101, 103, 204, 205, 304]);
/** The headers Node's fetch (undici) adds when a request has none of its own (not Accept-Encoding: nothing here compresses). */
const FETCH_DEFAULTS = {
  accept: '*/*',
  'accept-language': '*',
  'sec-fetch-mode': 'cors',
  'user-agent': 'node',
};

interface Outgoing {
  url: URL;
  method: string;
  headers: Headers;
  body: Buffer | undefined;
}

/**
 * A fetch that hands each request to `app.inject()`: the request is normalised by `Request` (so
 * bodies, their content types and header merging are what the global fetch would send), and
 * redirects are followed, returned or refused as `init.redirect` says. Any other origin than
 * `origin` fails as an unreachable host would.
 */
export function injectFetch(app: FastifyInstance, origin = TEST_ORIGIN): typeof fetch {
  const once = async ({ url, method, headers, body }: Outgoing, signal?: AbortSignal): Promise<Response> => {
    if (url.origin !== origin) throw new TypeError(`fetch failed: nothing answers at ${url.origin}`);
    const sent: Record<string, string> = { ...FETCH_DEFAULTS, host: url.host };
    headers.forEach((value, name) => {
      sent[name] = value;
    });
    // As a stream, as fetch answers: a live tail (server-sent events) answers at its headers.
    const injected = await app.inject({
      method: method as 'GET',
      url: `${url.pathname}${url.search}`,
      headers: sent,
      payloadAsStream: true,
      ...(signal === undefined ? {} : { signal }),
      ...(body === undefined ? {} : { payload: body }),
    });
    const received = new Headers();
    for (const [name, value] of Object.entries(injected.headers)) {
      if (value === undefined) continue;
      for (const one of Array.isArray(value) ? value : [value]) received.append(name, String(one));
    }
    const stream = injected.stream();
    if (NULL_BODY.has(injected.statusCode)) stream.resume();
    const payload = NULL_BODY.has(injected.statusCode) ? null : (Readable.toWeb(stream) as ReadableStream);
    const response = new Response(payload, {
      status: injected.statusCode,
      statusText: injected.statusMessage || (STATUS_CODES[injected.statusCode] ?? ''),
      headers: received,
    });
    Object.defineProperty(response, 'url', { value: url.toString() });
    registerIssued(response);
    return response;
  };

  return async (input, init) => {
    const request = new Request(input, init);
    let outgoing: Outgoing = {
      url: new URL(request.url),
      method: request.method,
      headers: request.headers,
      body: request.body === null ? undefined : Buffer.from(await request.arrayBuffer()),
    };
    for (let hop = 0; ; hop++) {
      request.signal.throwIfAborted();
      const response = await once(outgoing, request.signal);
      const location = response.headers.get('location');
      if (!REDIRECTS.has(response.status) || location === null || request.redirect === 'manual') {
        if (hop > 0) Object.defineProperty(response, 'redirected', { value: true });
        return response;
      }
      if (request.redirect === 'error') throw new TypeError('fetch failed: unexpected redirect');
      if (hop === 20) throw new TypeError('fetch failed: redirect count exceeded');
      // As the Fetch standard says: 303 (and 301/302 after a POST) turn into a GET without a body.
      const toGet =
        response.status === 303
          ? outgoing.method !== 'HEAD'
          : response.status <= 302 && outgoing.method === 'POST';
      const headers = new Headers(outgoing.headers);
      if (toGet)
        for (const name of ['content-type', 'content-length', 'content-encoding']) headers.delete(name);
      outgoing = {
        url: new URL(location, outgoing.url),
        method: toGet ? 'GET' : outgoing.method,
        headers,
        body: toGet ? undefined : outgoing.body,
      };
    }
  };
}
