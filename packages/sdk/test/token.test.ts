import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createIdgateClient, IdgateSdkError } from '../src/index.js';

// ---- a recording test server that always answers a token response ------------------------------
interface Recorded {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}
const tokens = { access_token: 'at', token_type: 'Bearer', expires_in: 3600, refresh_token: 'rt' };
let server: Server;
let baseUrl: string;
let requests: Recorded[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body });
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      res.end(JSON.stringify(tokens));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});
beforeEach(() => {
  requests = [];
});
const only = (): Recorded => {
  expect(requests).toHaveLength(1);
  const request = requests[0] as Recorded;
  expect([request.method, request.path]).toEqual(['POST', '/oauth/token']);
  expect(request.headers['content-type']).toBe('application/x-www-form-urlencoded');
  return request;
};
/** Decodes a Basic header as an RFC 6749 §2.3.1 server must: base64, split at ':', form-decode. */
const decodeBasic = (header: string | undefined): [string, string] => {
  const raw = Buffer.from((header ?? '').replace(/^Basic /, ''), 'base64').toString('utf8');
  const [id = '', secret = ''] = raw.split(':');
  const decode = (v: string) => decodeURIComponent(v.replace(/\+/g, ' '));
  return [decode(id), decode(secret)];
};

describe('RFC 6749 §4.3 password grant', () => {
  it('sends client_secret_basic by default with the exact form body', async () => {
    const client = createIdgateClient({ baseUrl });
    const result = await client.passwordGrant({
      clientId: 'kubectl',
      clientSecret: 'shh',
      username: 'alice',
      password: 'p@ss wörd&x=1',
      scope: 'openid groups',
    });
    expect(result).toEqual(tokens);
    const request = only();
    expect(request.body).toBe(
      'grant_type=password&username=alice&password=p%40ss+w%C3%B6rd%26x%3D1&scope=openid+groups',
    );
    expect(request.headers.authorization).toBe(`Basic ${Buffer.from('kubectl:shh').toString('base64')}`);
  });

  it('sends client_id and client_secret in the body with client_secret_post', async () => {
    const client = createIdgateClient({ baseUrl });
    await client.passwordGrant({
      clientId: 'kubectl',
      clientSecret: 's+cret',
      username: 'alice',
      password: 'pw',
      authMethod: 'client_secret_post',
    });
    const request = only();
    expect(request.body).toBe(
      'grant_type=password&username=alice&password=pw&client_id=kubectl&client_secret=s%2Bcret',
    );
    expect(request.headers.authorization).toBeUndefined();
  });

  it('sends only client_id for a public client (no secret → authMethod none)', async () => {
    const client = createIdgateClient({ baseUrl });
    await client.passwordGrant({ clientId: 'kubectl', username: 'alice', password: 'pw' });
    const request = only();
    expect(request.body).toBe('grant_type=password&username=alice&password=pw&client_id=kubectl');
    expect(request.headers.authorization).toBeUndefined();
  });

  it('rejects inconsistent client authentication before sending', async () => {
    const client = createIdgateClient({ baseUrl });
    await expect(
      client.passwordGrant({
        clientId: 'c',
        username: 'a',
        password: 'p',
        authMethod: 'client_secret_basic',
      }),
    ).rejects.toThrow('authMethod "client_secret_basic" needs a clientSecret');
    await expect(
      client.passwordGrant({
        clientId: 'c',
        clientSecret: 's',
        username: 'a',
        password: 'p',
        authMethod: 'none',
      }),
    ).rejects.toThrow('authMethod "none" sends no client secret: drop clientSecret or pick another method');
    expect(requests).toHaveLength(0);
  });
});

describe('RFC 6749 §2.3.1 client_secret_basic encoding', () => {
  const clientId = 'my:client id%é';
  const clientSecret = 's3cr:t p%ss€+';

  it('form-urlencodes id and secret before joining with ":" and base64-encoding', async () => {
    const client = createIdgateClient({ baseUrl });
    await client.clientCredentialsGrant({ clientId, clientSecret });
    const request = only();
    const encoded = 'my%3Aclient+id%25%C3%A9:s3cr%3At+p%25ss%E2%82%AC%2B';
    expect(request.headers.authorization).toBe(`Basic ${Buffer.from(encoded, 'ascii').toString('base64')}`);
    expect(request.headers.authorization).toBe(
      'Basic bXklM0FjbGllbnQraWQlMjUlQzMlQTk6czNjciUzQXQrcCUyNXNzJUUyJTgyJUFDJTJC',
    );
    expect(decodeBasic(request.headers.authorization)).toEqual([clientId, clientSecret]);
    expect(request.body).toBe('grant_type=client_credentials');
  });

  it('encodes the RFC 6749 Appendix B example the same way in the header and the body', async () => {
    const client = createIdgateClient({ baseUrl });
    await client.requestToken(
      { grant_type: 'client_credentials' },
      { method: 'client_secret_basic', clientId: 'a', clientSecret: ' %&+£€' },
    );
    expect(decodeBasic(only().headers.authorization)).toEqual(['a', ' %&+£€']);
    expect(Buffer.from((requests[0]?.headers.authorization ?? '').slice(6), 'base64').toString()).toBe(
      'a:+%25%26%2B%C2%A3%E2%82%AC',
    );
    requests = [];
    await client.requestToken(
      { grant_type: 'client_credentials' },
      { method: 'client_secret_post', clientId: 'a', clientSecret: ' %&+£€' },
    );
    expect(only().body).toBe(
      'grant_type=client_credentials&client_id=a&client_secret=+%25%26%2B%C2%A3%E2%82%AC',
    );
  });
});

describe('RFC 6749 §4.4 client credentials grant', () => {
  it('sends scope and every RFC 8707 resource', async () => {
    const client = createIdgateClient({ baseUrl });
    await client.clientCredentialsGrant({
      clientId: 'ci',
      clientSecret: 's',
      scope: 'tokenreview',
      resource: ['https://a.example', 'https://b.example/x?y=1'],
      authMethod: 'client_secret_post',
    });
    expect(only().body).toBe(
      'grant_type=client_credentials&scope=tokenreview&resource=https%3A%2F%2Fa.example' +
        '&resource=https%3A%2F%2Fb.example%2Fx%3Fy%3D1&client_id=ci&client_secret=s',
    );
  });
});

describe('RFC 6749 §3.2 token request (generic)', () => {
  it('sends a refresh token grant as given', async () => {
    const client = createIdgateClient({ baseUrl });
    const result = await client.requestToken(
      { grant_type: 'refresh_token', refresh_token: 'rt-1', scope: 'openid' },
      { method: 'none', clientId: 'kubectl' },
    );
    expect(result.refresh_token).toBe('rt');
    const request = only();
    expect(request.body).toBe('grant_type=refresh_token&refresh_token=rt-1&scope=openid&client_id=kubectl');
  });

  it('puts grant_type first and sends body client credentials when there is no clientAuth', async () => {
    const client = createIdgateClient({ baseUrl });
    await client.requestToken({
      code: 'c1',
      grant_type: 'authorization_code',
      client_id: 'app',
      code_verifier: 'v'.repeat(43),
    });
    expect(only().body).toBe(
      `grant_type=authorization_code&code=c1&client_id=app&code_verifier=${'v'.repeat(43)}`,
    );
  });

  it('refuses client credentials both in the request and as clientAuth', async () => {
    const client = createIdgateClient({ baseUrl });
    await expect(
      client.requestToken(
        { grant_type: 'client_credentials', client_id: 'x' },
        { method: 'client_secret_basic', clientId: 'x', clientSecret: 's' },
      ),
    ).rejects.toBeInstanceOf(IdgateSdkError);
    expect(requests).toHaveLength(0);
  });
});
