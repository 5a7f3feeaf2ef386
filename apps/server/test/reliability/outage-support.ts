import type { FastifyInstance } from 'fastify';
import { registeredRoutes } from '../helpers/routes.js';

/** What one request of a walk answered, and how long it took. */
export interface Answer {
  label: string;
  status: number;
  ms: number;
  retryAfter: string | null;
  contentType: string;
  body: string;
}

/** The credentials a walk presents, each route getting every one of them. */
export interface WalkCredentials {
  adminKey: string;
  clientAuth: string;
  accessToken: string;
  username: string;
  password: string;
}

/** Text of a driver's error or of the database that must never reach a client. */
const INTERNAL =
  /ECONNREFUSED|Query read timeout|Connection terminated|SQLITE_|57P0|statement timeout|kysely/i;

/**
 * Sends every registered route of `app` (so routes added later are covered) plausible requests:
 * an admin API key with a JSON body, client credentials with a form body (a password grant and a
 * token), and a bearer access token, each bounded by `limitMs` (a request that hangs is a
 * failure, not a wait). `send` is a fetch (real HTTP or inject).
 */
export async function walkEveryRoute(
  app: FastifyInstance,
  send: typeof fetch,
  baseUrl: string,
  credentials: WalkCredentials,
  limitMs: number,
): Promise<Answer[]> {
  // A body for the token, revocation, introspection and device endpoints (the client is in the
  // Authorization header); a query for the pages.
  const form = new URLSearchParams({
    grant_type: 'password',
    username: credentials.username,
    password: credentials.password,
    scope: 'openid',
    token: credentials.accessToken,
    user_code: 'ABCD-EFGH',
  }).toString();
  const query = `${form}&${new URLSearchParams({
    client_id: 'x',
    response_type: 'code',
    redirect_uri: 'https://app.example.test/cb',
  })}`;
  const requests: Array<{ label: string; init: RequestInit; path: string }> = [];
  for (const [method, route] of registeredRoutes(app)) {
    const path = route
      .split('/')
      .map((segment) => (segment.startsWith(':') || segment === '*' ? 'x' : segment))
      .join('/');
    const bodyless = method === 'GET' || method === 'DELETE' || method === 'OPTIONS';
    requests.push(
      {
        label: `${method} ${route} (admin key, JSON)`,
        path,
        init: {
          method,
          headers: {
            authorization: `Bearer ${credentials.adminKey}`,
            ...(bodyless ? {} : { 'content-type': 'application/json' }),
          },
          ...(bodyless
            ? {}
            : {
                body: route.endsWith('/authenticate')
                  ? JSON.stringify({
                      apiVersion: 'authentication.k8s.io/v1',
                      kind: 'TokenReview',
                      spec: { token: credentials.accessToken },
                    })
                  : JSON.stringify({ name: 'gh', type: 'github', clientId: 'Iv1.x', clientSecret: 'plain' }),
              }),
        },
      },
      {
        label: `${method} ${route} (client credentials, form)`,
        path: bodyless ? `${path}?${query}` : path,
        init: {
          method,
          headers: {
            authorization: credentials.clientAuth,
            accept: 'text/html,application/xhtml+xml',
            ...(bodyless ? {} : { 'content-type': 'application/x-www-form-urlencoded' }),
          },
          ...(bodyless ? {} : { body: form }),
        },
      },
      {
        label: `${method} ${route} (access token)`,
        path,
        init: { method, headers: { authorization: `Bearer ${credentials.accessToken}` } },
      },
    );
  }
  const answers: Answer[] = [];
  // A few at a time: enough to queue on the pool, not so many that the machine is the bottleneck.
  for (let i = 0; i < requests.length; i += 12) {
    answers.push(
      ...(await Promise.all(
        requests.slice(i, i + 12).map(async ({ label, path, init }) => {
          const started = performance.now();
          try {
            const response = await send(`${baseUrl}${path}`, {
              ...init,
              redirect: 'manual',
              signal: AbortSignal.timeout(limitMs),
            });
            // A live tail (server-sent events) that opened is an answer: read its first chunk, then drop it.
            const streaming = (response.headers.get('content-type') ?? '').startsWith('text/event-stream');
            const body = streaming ? await firstChunk(response) : await response.text();
            return {
              label,
              status: response.status,
              ms: performance.now() - started,
              retryAfter: response.headers.get('retry-after'),
              contentType: response.headers.get('content-type') ?? '',
              body,
            };
          } catch (error) {
            // Aborted by the time limit (a hang) or the connection dropped: both failures.
            return {
              label,
              status: 0,
              ms: performance.now() - started,
              retryAfter: null,
              contentType: '',
              body: String(error),
            };
          }
        }),
      )),
    );
  }
  return answers;
}

/**
 * What is wrong with the answers of a walk while the database is away: anything 5xx but a 503, a
 * 503 without a numeric Retry-After or in the wrong shape for its route, no answer within the
 * limit, or the driver's words in a body.
 */
export function outageViolations(answers: Answer[], limitMs: number): string[] {
  const wrong: string[] = [];
  for (const answer of answers) {
    const at = `${answer.label} → ${answer.status} in ${Math.round(answer.ms)} ms`;
    if (answer.status === 0) wrong.push(`${at}: no answer (${answer.body})`);
    else if (answer.status >= 500 && answer.status !== 503) wrong.push(`${at}: ${answer.body.slice(0, 200)}`);
    if (answer.ms > limitMs) wrong.push(`${at}: slower than ${limitMs} ms`);
    if (INTERNAL.test(answer.body)) wrong.push(`${at}: shows internal text: ${answer.body.slice(0, 200)}`);
    if (answer.status !== 503) continue;
    if (!/^[0-9]+$/.test(answer.retryAfter ?? '')) wrong.push(`${at}: Retry-After ${answer.retryAfter}`);
    if (answer.contentType.startsWith('application/problem+json')) {
      const problem = JSON.parse(answer.body) as { code?: string };
      if (problem.code !== 'storage_unavailable') wrong.push(`${at}: problem ${answer.body}`);
    } else if (answer.contentType.startsWith('application/json')) {
      const body = JSON.parse(answer.body) as { error?: string; status?: string };
      // /readyz answers its checks; every OAuth endpoint temporarily_unavailable.
      if (body.error !== 'temporarily_unavailable' && body.status !== 'unavailable')
        wrong.push(`${at}: JSON ${answer.body.slice(0, 200)}`);
    } else if (answer.contentType.startsWith('text/html')) {
      if (!/unavailable/i.test(answer.body)) wrong.push(`${at}: page says ${answer.body.slice(0, 200)}`);
    } else wrong.push(`${at}: content type ${answer.contentType}`);
  }
  return wrong;
}

/** How many log lines say `message` (pino JSON lines). */
export function logged(logs: string[], message: string): number {
  return logs.filter((line) => {
    try {
      return (JSON.parse(line) as { msg?: string }).msg === message;
    } catch {
      return false;
    }
  }).length;
}

/** The median and the largest of `values`, rounded to ms. */
export function spread(values: number[]): { median: number; max: number } {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    median: Math.round(sorted[Math.floor(sorted.length / 2)] ?? 0),
    max: Math.round(sorted[sorted.length - 1] ?? 0),
  };
}

async function firstChunk(response: Response): Promise<string> {
  const reader = response.body?.getReader();
  if (reader === undefined) return '';
  const { value } = await reader.read();
  await reader.cancel();
  return new TextDecoder().decode(value);
}
