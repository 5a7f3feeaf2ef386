import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  createIdgateAdminClient,
  createIdgateClient,
  discoverIssuer,
  IdgateHttpError,
  IdgateSchemaError,
  IdgateSdkError,
} from '../src/index.js';
import { refusingPort } from './refusing-port.js';

// ---- a test server whose answer each test sets ----------------------------------------------------
interface Reply {
  status: number;
  headers?: Record<string, string>;
  body?: string;
  /** Never answer: the request waits until the server closes its connections. */
  hang?: boolean;
}
let server: Server;
let baseUrl: string;
let requestCount = 0;
let answer: (request: IncomingMessage, body: string) => Reply = () => ({ status: 404 });

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      requestCount += 1;
      const reply = answer(req, Buffer.concat(chunks).toString('utf8'));
      if (reply.hang === true) return;
      res.writeHead(reply.status, reply.headers ?? {});
      res.end(reply.body ?? '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});
beforeEach(() => {
  requestCount = 0;
});
const json = (status: number, body: unknown, type = 'application/json'): Reply => ({
  status,
  headers: { 'content-type': type },
  body: JSON.stringify(body),
});
async function failure<T extends Error>(
  promise: Promise<unknown>,
  type: new (...args: never[]) => T,
): Promise<T> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(type);
  expect(error).toBeInstanceOf(IdgateSdkError);
  return error as T;
}

describe('HTTP errors → IdgateHttpError', () => {
  it('maps a 400 RFC 6749 §5.2 error to oauthError', async () => {
    answer = () => ({
      ...json(400, { error: 'invalid_grant', error_description: 'bad credentials' }),
      headers: { 'content-type': 'application/json;charset=utf-8', 'cache-control': 'no-store' },
    });
    const client = createIdgateClient({ baseUrl });
    const error = await failure(
      client.passwordGrant({ clientId: 'c', username: 'alice', password: 'pw', authMethod: 'none' }),
      IdgateHttpError,
    );
    expect(error.message).toBe('POST /oauth/token failed with 400: invalid_grant (bad credentials)');
    expect(error.name).toBe('IdgateHttpError');
    expect(error.status).toBe(400);
    expect(error.endpoint).toBe('POST /oauth/token');
    expect(error.oauthError).toEqual({ error: 'invalid_grant', error_description: 'bad credentials' });
    expect(error.problem).toBeUndefined();
    expect(error.body).toEqual({ error: 'invalid_grant', error_description: 'bad credentials' });
    expect(error.headers.get('cache-control')).toBe('no-store');
  });

  it('maps a 401 application/problem+json answer to problem', async () => {
    const problem = { type: 'about:blank', title: 'Unauthorized', status: 401, code: 'api_key_invalid' };
    answer = () => ({
      ...json(401, problem, 'application/problem+json'),
      headers: {
        'content-type': 'application/problem+json',
        'www-authenticate': 'Bearer error="invalid_token"',
      },
    });
    const client = createIdgateClient({ baseUrl, apiKey: 'idg_wrong' });
    const error = await failure(client.reviewToken('eyJhbGciOiJFZERTQSJ9.e30.sig'), IdgateHttpError);
    expect(error.message).toBe('POST /oauth/authenticate failed with 401: api_key_invalid (Unauthorized)');
    expect(error.status).toBe(401);
    expect(error.problem).toEqual(problem);
    expect(error.oauthError).toBeUndefined();
    expect(error.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
  });

  it('reads a 503 storage_unavailable problem, Retry-After included', async () => {
    const problem = {
      type: 'about:blank',
      title: 'Service Unavailable',
      status: 503,
      detail: 'the service is unavailable; try again shortly',
      code: 'storage_unavailable',
    };
    answer = () => ({
      ...json(503, problem, 'application/problem+json'),
      headers: { 'content-type': 'application/problem+json', 'retry-after': '5' },
    });
    const client = createIdgateAdminClient({ baseUrl, apiKey: 'idg_x', retry: 0 });
    const error = await failure(client.listIdentityProviders(), IdgateHttpError);
    expect(error.problem?.code).toBe('storage_unavailable');
    expect(error.headers.get('retry-after')).toBe('5');
    expect(error.message).toBe(
      'GET /admin/v1/identity-providers failed with 503: storage_unavailable (the service is unavailable; try again shortly)',
    );
  });

  it('does not take a problem with a code idgate never sends for one of its problems', async () => {
    const foreign = { type: 'about:blank', title: 'Unauthorized', status: 401, code: 'token_revoked' };
    answer = () => json(401, foreign, 'application/problem+json');
    const client = createIdgateClient({ baseUrl, apiKey: 'idg_wrong' });
    const error = await failure(client.reviewToken('eyJhbGciOiJFZERTQSJ9.e30.sig'), IdgateHttpError);
    expect(error.problem).toBeUndefined();
    expect(error.body).toEqual(foreign);
    expect(error.message).toBe(`POST /oauth/authenticate failed with 401: ${JSON.stringify(foreign)}`);
  });

  it('says a 500 text body is not JSON, quotes it, and keeps it as text', async () => {
    answer = () => ({ status: 500, headers: { 'content-type': 'text/plain' }, body: 'upstream\n  exploded' });
    const error = await failure(createIdgateClient({ baseUrl }).getJwks(), IdgateHttpError);
    expect(error.message).toBe(
      'expected JSON from GET /oauth/keys, got text/plain (status 500): upstream exploded',
    );
    expect(error.body).toBe('upstream\n  exploded');
    expect(error.oauthError).toBeUndefined();
    expect(error.problem).toBeUndefined();
  });

  it('keeps a body that claims JSON but is not as text, and names an empty body by its status text', async () => {
    answer = () => ({
      status: 502,
      headers: { 'content-type': 'application/json' },
      body: '<html>bad gateway',
    });
    const first = await failure(createIdgateClient({ baseUrl }).getJwks(), IdgateHttpError);
    expect(first.body).toBe('<html>bad gateway');
    answer = () => ({ status: 500 });
    const second = await failure(createIdgateClient({ baseUrl }).getJwks(), IdgateHttpError);
    expect(second.message).toBe('GET /oauth/keys failed with 500: Internal Server Error');
    expect(second.body).toBe('');
  });
});

describe('2xx with a body that does not match → IdgateSchemaError', () => {
  it('rejects a JWKS that carries a private key', async () => {
    answer = () => json(200, { keys: [{ kty: 'OKP', kid: 'k1', crv: 'Ed25519', x: 'x', d: 'private' }] });
    const error = await failure(createIdgateClient({ baseUrl }).getJwks(), IdgateSchemaError);
    expect(error.endpoint).toBe('GET /oauth/keys');
    expect(error.status).toBe(200);
    expect(error.issues.map((i) => i.path)).toEqual([['keys', 0]]);
    expect(error.message).toBe(
      'GET /oauth/keys returned a response that does not match Jwks: keys.0: a published JWK must not contain private key material',
    );
  });

  it('rejects a token response whose expires_in is a string', async () => {
    answer = () => json(200, { access_token: 'a', token_type: 'Bearer', expires_in: '3600' });
    const client = createIdgateClient({ baseUrl });
    const error = await failure(
      client.clientCredentialsGrant({ clientId: 'c', clientSecret: 's' }),
      IdgateSchemaError,
    );
    expect(error.issues.map((i) => i.path)).toEqual([['expires_in']]);
    expect(error.endpoint).toBe('POST /oauth/token');
  });

  it('rejects a TokenReview of the wrong kind and an HTML page', async () => {
    answer = () => json(200, { apiVersion: 'authentication.k8s.io/v1', kind: 'Status', status: {} });
    const review = await failure(
      createIdgateClient({ baseUrl, apiKey: 'k' }).reviewToken('t'),
      IdgateSchemaError,
    );
    expect(review.issues.map((i) => i.path)).toEqual([['kind']]);
    answer = () => ({ status: 200, headers: { 'content-type': 'text/html' }, body: '<html>login</html>' });
    const html = await failure(createIdgateClient({ baseUrl }).getProviderMetadata(), IdgateSchemaError);
    expect(html.issues.map((i) => i.path)).toEqual([[]]);
  });
});

describe('answers that are not JSON say so, not what a schema found', () => {
  const page = (status: number, title: string): Reply => ({
    status,
    headers: { 'content-type': 'text/html; charset=utf-8' },
    body: `<!doctype html>\n<html><head><title>${title}</title></head><body><h1>${title}</h1></body></html>`,
  });
  const admin = () => createIdgateAdminClient({ baseUrl, apiKey: 'idg_SECRET_KEY' });

  it("a proxy's error page: IdgateHttpError naming the endpoint, the type and the status", async () => {
    answer = () => page(502, '502 Bad Gateway');
    const error = await failure(admin().listUsers(), IdgateHttpError);
    expect(error.message).toBe(
      'expected JSON from GET /admin/v1/users, got text/html (status 502): 502 Bad Gateway',
    );
    expect(error.status).toBe(502);
    expect(error.problem).toBeUndefined();
    expect(error.body).toContain('<title>502 Bad Gateway</title>');
    const stream = await failure(admin().followEvents().next(), IdgateHttpError);
    expect(stream.message).toBe(
      'expected JSON from GET /admin/v1/events/stream, got text/html (status 502): 502 Bad Gateway',
    );
  });

  it('a web page answered with 200 (baseUrl names a website): IdgateSchemaError, no zod issues in the message', async () => {
    answer = () => page(200, 'Sign in');
    const error = await failure(admin().listUsers(), IdgateSchemaError);
    expect(error.message).toBe('expected JSON from GET /admin/v1/users, got text/html (status 200): Sign in');
    expect(error.status).toBe(200);
    expect(error.issues.length).toBeGreaterThan(0);
    answer = () => ({ status: 200, headers: { 'content-type': 'text/html' }, body: '<p>no title' });
    const untitled = await failure(createIdgateClient({ baseUrl }).getJwks(), IdgateSchemaError);
    expect(untitled.message).toBe('expected JSON from GET /oauth/keys, got text/html (status 200)');
  });

  it('a body that claims JSON and does not parse, and one with no content type', async () => {
    answer = () => ({ status: 200, headers: { 'content-type': 'application/json' }, body: '{"items": [' });
    const cut = await failure(admin().listUsers(), IdgateSchemaError);
    expect(cut.message).toBe(
      'expected JSON from GET /admin/v1/users, got application/json (status 200): a body that does not parse',
    );
    answer = () => ({ status: 503, body: 'idg_SECRET_KEY is not welcome here' });
    const bare = await failure(admin().listUsers(), IdgateHttpError);
    expect(bare.message).toBe(
      'expected JSON from GET /admin/v1/users, got no content type (status 503): [redacted] is not welcome here',
    );
  });
});

describe('network failures → IdgateSdkError with cause', () => {
  it('wraps a timeout', async () => {
    answer = () => ({ ...json(200, { keys: [] }), hang: true });
    const error = await failure(createIdgateClient({ baseUrl, timeoutMs: 50 }).getJwks(), IdgateSdkError);
    expect(error).not.toBeInstanceOf(IdgateHttpError);
    expect(error.name).toBe('IdgateSdkError');
    expect(error.message).toBe(`GET /oauth/keys failed: idgate at ${baseUrl} did not answer within 50 ms`);
    expect((error.cause as Error).name).toBe('TimeoutError');
  });

  it('wraps a refused connection, naming the server it could not reach', async () => {
    const port = await refusingPort();
    const error = await failure(
      createIdgateClient({ baseUrl: `http://127.0.0.1:${port}` }).getJwks(),
      IdgateSdkError,
    );
    expect(error.message).toBe(
      `GET /oauth/keys failed: cannot reach idgate at http://127.0.0.1:${port}: ECONNREFUSED`,
    );
    expect(error.cause).toBeInstanceOf(TypeError);
    // the admin client alike; the server is named by its origin, without the path
    const admin = createIdgateAdminClient({ baseUrl: `http://127.0.0.1:${port}/idgate/`, apiKey: 'idg_key' });
    const listing = await failure(admin.listUsers(), IdgateSdkError);
    expect(listing.message).toBe(
      `GET /idgate/admin/v1/users failed: cannot reach idgate at http://127.0.0.1:${port}: ECONNREFUSED`,
    );
    // and the event stream, which reads its answer as it comes
    const stream = await failure(admin.followEvents().next(), IdgateSdkError);
    expect(stream.message).toBe(
      `GET /idgate/admin/v1/events/stream failed: cannot reach idgate at http://127.0.0.1:${port}: ECONNREFUSED`,
    );
  });

  it('refuses a baseUrl with credentials, which fetch would refuse quoting them', () => {
    const make = () => createIdgateClient({ baseUrl: 'http://operator:hunter2@127.0.0.1:8080' });
    expect(make).toThrow(IdgateSdkError);
    expect(make).toThrow('baseUrl must not carry credentials (user:password@): pass the apiKey option');
  });

  it('names the issuer a native client could not reach', async () => {
    const port = await refusingPort();
    const error = await failure(discoverIssuer(`http://127.0.0.1:${port}/oauth`), IdgateSdkError);
    expect(error.message).toBe(
      `GET /oauth/.well-known/openid-configuration failed: cannot reach the issuer at http://127.0.0.1:${port}: ECONNREFUSED`,
    );
  });
});

describe('no secret in any error message', () => {
  const apiKey = 'idg_SECRETKEY_0123';
  const clientSecret = 'CLIENT-SECRET-4567';
  const password = 'PASSWORD+89ab';
  const basic = Buffer.from(`c:${clientSecret}`).toString('base64');
  const echo = (req: IncomingMessage, body: string) =>
    `auth=${req.headers.authorization ?? ''} raw=${body} body=${decodeURIComponent(body.replace(/\+/g, ' '))}`;
  const assertClean = (error: Error) => {
    for (const text of [error.message, error.stack ?? '', String(error)]) {
      for (const secret of [apiKey, clientSecret, password, basic, 'PASSWORD%2B89ab']) {
        expect(text).not.toContain(secret);
      }
    }
  };

  it('redacts secrets a server echoes (raw, decoded or base64) in an OAuth error, a problem and a text body', async () => {
    const client = createIdgateClient({ baseUrl, apiKey });
    answer = (req, body) => json(400, { error: 'invalid_client', error_description: echo(req, body) });
    for (const authMethod of ['client_secret_basic', 'client_secret_post'] as const) {
      const error = await failure(
        client.passwordGrant({ clientId: 'c', clientSecret, username: 'alice', password, authMethod }),
        IdgateHttpError,
      );
      assertClean(error);
      expect(error.message).toContain('[redacted]');
      expect(error.message).toContain('username=alice');
    }
    answer = (req, body) =>
      json(
        401,
        { title: 'Unauthorized', status: 401, code: 'api_key_invalid', detail: echo(req, body) },
        'application/problem+json',
      );
    const problem = await failure(client.reviewToken('eyJhbGciOiJFZERTQSJ9.e30.sig'), IdgateHttpError);
    assertClean(problem);
    expect(problem.message).toBe(
      'POST /oauth/authenticate failed with 401: api_key_invalid (auth=Bearer [redacted] ' +
        'raw={"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","spec":{"token":"[redacted]"}} ' +
        'body={"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","spec":{"token":"[redacted]"}})',
    );
    answer = (req, body) => ({ status: 500, body: echo(req, body) });
    assertClean(
      await failure(client.clientCredentialsGrant({ clientId: 'c', clientSecret }), IdgateHttpError),
    );
  });

  it('redacts secrets from network errors and argument errors', async () => {
    const leaky = createIdgateClient({
      baseUrl,
      apiKey,
      // a fetch (think: a proxy library) whose error message repeats the whole request
      fetch: async (input, init) => {
        const request = new Request(input, init);
        const body = decodeURIComponent((await request.text()).replace(/\+/g, ' '));
        throw new TypeError(`proxy rejected ${request.headers.get('authorization')} ${body}`);
      },
    });
    const post = {
      clientId: 'c',
      clientSecret,
      username: 'alice',
      password,
      authMethod: 'client_secret_post',
    } as const;
    const postError = await failure(leaky.passwordGrant(post), IdgateSdkError);
    assertClean(postError);
    expect(postError.message).toBe(
      `POST /oauth/token failed: cannot reach idgate at ${baseUrl}: proxy rejected null grant_type=password&username=alice` +
        '&password=[redacted]&client_id=c&client_secret=[redacted]',
    );
    const reviewError = await failure(leaky.reviewToken('eyJhbGciOiJFZERTQSJ9.e30.sig'), IdgateSdkError);
    assertClean(reviewError);
    expect(reviewError.message).toMatch(
      /^POST \/oauth\/authenticate failed: cannot reach idgate at http:\/\/127\.0\.0\.1:\d+: proxy rejected Bearer \[redacted\] /,
    );
    const client = createIdgateClient({ baseUrl });
    const argumentError = await failure(
      client.passwordGrant({ clientId: 'c', clientSecret, username: 'a', password, authMethod: 'none' }),
      IdgateSdkError,
    );
    assertClean(argumentError);
    expect(requestCount).toBe(0);
  });
});
