import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createIdgateClient, IdgateSdkError } from '../src/index.js';

// ---- a recording test server -------------------------------------------------------------------
interface Recorded {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}
interface Reply {
  status?: number;
  json?: unknown;
  text?: string;
}
let server: Server;
let baseUrl: string;
let requests: Recorded[] = [];
let replies: Reply[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body });
      const reply = (replies.length > 1 ? replies.shift() : replies[0]) ?? { status: 404, text: 'no reply' };
      const isJson = reply.json !== undefined;
      res.writeHead(reply.status ?? 200, { 'content-type': isJson ? 'application/json' : 'text/plain' });
      res.end(isJson ? JSON.stringify(reply.json) : (reply.text ?? ''));
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
  requests = [];
  replies = [];
});
const only = (): Recorded => {
  expect(requests).toHaveLength(1);
  return requests[0] as Recorded;
};

// ---- canned bodies -----------------------------------------------------------------------------
const issuer = 'http://127.0.0.1/oauth';
const metadata = {
  issuer,
  authorization_endpoint: `${issuer}/authorize`,
  token_endpoint: `${issuer}/token`,
  userinfo_endpoint: `${issuer}/userinfo`,
  jwks_uri: `${issuer}/keys`,
  scopes_supported: ['openid'],
  response_types_supported: ['code'],
  grant_types_supported: ['password', 'client_credentials'],
  subject_types_supported: ['public'],
  id_token_signing_alg_values_supported: ['EdDSA'],
  token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
  claims_supported: ['sub'],
  code_challenge_methods_supported: ['S256'],
  'x-extension': 1,
};
const jwks = {
  keys: [{ kty: 'OKP', crv: 'Ed25519', x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo', kid: 'k1' }],
};
const tokens = { access_token: 'at', token_type: 'Bearer', expires_in: 3600, scope: 'openid' };
const reviewed = (apiVersion: string) => ({
  apiVersion,
  kind: 'TokenReview',
  status: {
    authenticated: true,
    user: { username: 'alice', uid: 'u1', groups: ['dev'], extra: { a: ['b'] } },
  },
});

describe('discovery and JWKS (GET)', () => {
  it('GETs /oauth/.well-known/openid-configuration and keeps unknown fields', async () => {
    replies = [{ json: metadata }];
    const client = createIdgateClient({ baseUrl });
    expect(await client.getProviderMetadata()).toEqual(metadata);
    const request = only();
    expect([request.method, request.path, request.headers.accept]).toEqual([
      'GET',
      '/oauth/.well-known/openid-configuration',
      'application/json',
    ]);
    expect(request.headers.authorization).toBeUndefined();
  });

  it.each([
    ['without a trailing slash', (url: string) => url, '/oauth/keys'],
    ['with a trailing slash', (url: string) => `${url}/`, '/oauth/keys'],
    ['as a URL object', (url: string) => new URL(url), '/oauth/keys'],
    ['under a path prefix', (url: string) => `${url}/idgate`, '/idgate/oauth/keys'],
    ['under a path prefix with a slash', (url: string) => `${url}/idgate/`, '/idgate/oauth/keys'],
  ])('GETs the JWKS with baseUrl %s', async (_label, toBase, path) => {
    replies = [{ json: jwks }];
    expect(await createIdgateClient({ baseUrl: toBase(baseUrl) }).getJwks()).toEqual(jwks);
    expect(only().path).toBe(path);
  });

  it('sends the configured extra headers', async () => {
    replies = [{ json: jwks }];
    await createIdgateClient({ baseUrl, headers: { 'x-request-id': 'r-1' } }).getJwks();
    expect(only().headers['x-request-id']).toBe('r-1');
  });

  it('uses the custom fetch option', async () => {
    replies = [{ json: jwks }];
    const seen: string[] = [];
    const client = createIdgateClient({
      baseUrl,
      fetch: (input, init) => {
        const request = new Request(input, init);
        seen.push(`${request.method} ${request.url}`);
        return globalThis.fetch(request);
      },
    });
    expect(await client.getJwks()).toEqual(jwks);
    expect(seen).toEqual([`GET ${baseUrl}/oauth/keys`]);
    expect(requests).toHaveLength(1);
  });

  it('works with a fetch that never touches the network', async () => {
    const client = createIdgateClient({
      baseUrl: 'https://id.example.com',
      fetch: async () => Response.json(jwks),
    });
    expect(await client.getJwks()).toEqual(jwks);
    expect(requests).toHaveLength(0);
  });

  it('retries a GET on 503 when retry is set, and only then', async () => {
    replies = [{ status: 503, text: 'busy' }, { json: jwks }];
    expect(await createIdgateClient({ baseUrl, retry: 1 }).getJwks()).toEqual(jwks);
    expect(requests.map((r) => r.path)).toEqual(['/oauth/keys', '/oauth/keys']);
    requests = [];
    replies = [{ status: 503, text: 'busy' }, { json: jwks }];
    await expect(createIdgateClient({ baseUrl }).getJwks()).rejects.toMatchObject({ status: 503 });
    expect(requests).toHaveLength(1);
  });

  it('never retries a POST', async () => {
    replies = [{ status: 503, text: 'busy' }, { json: tokens }];
    const client = createIdgateClient({ baseUrl, retry: 2 });
    await expect(client.clientCredentialsGrant({ clientId: 'c', clientSecret: 's' })).rejects.toMatchObject({
      status: 503,
    });
    expect(requests).toHaveLength(1);
  });

  it('rejects a baseUrl that is not an absolute http(s) URL', () => {
    for (const bad of ['localhost:8080', '/oauth', 'ftp://id.example.com', 'not a url']) {
      expect(() => createIdgateClient({ baseUrl: bad })).toThrow(IdgateSdkError);
    }
  });
});

describe('TokenReview (POST /oauth/authenticate)', () => {
  it('POSTs a v1 TokenReview with the Bearer API key', async () => {
    replies = [{ json: reviewed('authentication.k8s.io/v1') }];
    const client = createIdgateClient({ baseUrl, apiKey: 'idg_key_1' });
    expect(await client.reviewToken('eyJ.tok')).toEqual(reviewed('authentication.k8s.io/v1'));
    const request = only();
    expect([request.method, request.path, request.headers['content-type']]).toEqual([
      'POST',
      '/oauth/authenticate',
      'application/json',
    ]);
    expect(request.headers.authorization).toBe('Bearer idg_key_1');
    expect(request.body).toBe(
      '{"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","spec":{"token":"eyJ.tok"}}',
    );
  });

  it('passes audiences and apiVersion v1beta1 through', async () => {
    replies = [{ json: reviewed('authentication.k8s.io/v1beta1') }];
    const client = createIdgateClient({ baseUrl, apiKey: 'idg_key_1' });
    const review = await client.reviewToken('t', {
      audiences: ['https://kubernetes.default.svc', 'idgate'],
      apiVersion: 'authentication.k8s.io/v1beta1',
    });
    expect(review.apiVersion).toBe('authentication.k8s.io/v1beta1');
    expect(JSON.parse(only().body)).toEqual({
      apiVersion: 'authentication.k8s.io/v1beta1',
      kind: 'TokenReview',
      spec: { token: 't', audiences: ['https://kubernetes.default.svc', 'idgate'] },
    });
  });

  it('refuses to send anything without an API key', async () => {
    const client = createIdgateClient({ baseUrl });
    const error = await client.reviewToken('t').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(IdgateSdkError);
    expect(error).toMatchObject({
      message: 'reviewToken needs an API key: pass { apiKey } to createIdgateClient',
      endpoint: 'POST /oauth/authenticate',
    });
    expect(requests).toHaveLength(0);
  });
});
