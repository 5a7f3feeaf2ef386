import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { bearerChallengeParams } from '../src/http.js';
import { createIdgateClient, IdgateHttpError, IdgateSchemaError, IdgateSdkError } from '../src/index.js';

// ---- a recording test server whose answers each test sets --------------------------------------
interface Recorded {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}
interface Reply {
  status?: number;
  headers?: Record<string, string>;
  json?: unknown;
  text?: string;
}
let server: Server;
let baseUrl: string;
let requests: Recorded[] = [];
let answer: (request: IncomingMessage, body: string) => Reply = () => ({ status: 404, text: 'no reply' });

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body });
      const reply = answer(req, body);
      const isJson = reply.json !== undefined;
      res.writeHead(reply.status ?? 200, {
        ...(isJson ? { 'content-type': 'application/json' } : {}),
        ...reply.headers,
      });
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
  answer = () => ({ status: 404, text: 'no reply' });
});

/** The one request sent, checked to be a form POST to `path`. */
const onlyForm = (path: string): Recorded => {
  expect(requests).toHaveLength(1);
  const request = requests[0] as Recorded;
  expect([request.method, request.path, request.headers['content-type']]).toEqual([
    'POST',
    path,
    'application/x-www-form-urlencoded',
  ]);
  expect(request.headers.accept).toBe('application/json');
  return request;
};
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
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

const tokens = {
  access_token: 'at-1',
  token_type: 'Bearer',
  expires_in: 3600,
  refresh_token: 'rt-2',
  id_token: 'eyJ.id.sig',
  scope: 'openid groups',
};
const verifier = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';

describe('RFC 6749 §4.1.3 authorization code grant (exchangeCode)', () => {
  const redirectUri = 'https://app.example.com/cb?x=1';

  it('sends code, redirect_uri and code_verifier with client_secret_basic by default', async () => {
    answer = () => ({ json: tokens });
    const client = createIdgateClient({ baseUrl });
    const result = await client.exchangeCode({
      code: 'c0de/+=',
      redirectUri,
      codeVerifier: verifier,
      clientId: 'app',
      clientSecret: 's3:cret',
    });
    expect(result).toEqual(tokens);
    const request = onlyForm('/oauth/token');
    expect(request.body).toBe(
      'grant_type=authorization_code&code=c0de%2F%2B%3D' +
        `&redirect_uri=https%3A%2F%2Fapp.example.com%2Fcb%3Fx%3D1&code_verifier=${verifier}`,
    );
    expect(request.headers.authorization).toBe(basic('app', 's3%3Acret'));
  });

  it('sends the client credentials in the body with client_secret_post', async () => {
    answer = () => ({ json: tokens });
    await createIdgateClient({ baseUrl }).exchangeCode({
      code: 'c',
      redirectUri,
      codeVerifier: verifier,
      clientId: 'app',
      clientSecret: 's',
      authMethod: 'client_secret_post',
    });
    const request = onlyForm('/oauth/token');
    expect(request.body).toBe(
      'grant_type=authorization_code&code=c&redirect_uri=https%3A%2F%2Fapp.example.com%2Fcb%3Fx%3D1' +
        `&code_verifier=${verifier}&client_id=app&client_secret=s`,
    );
    expect(request.headers.authorization).toBeUndefined();
  });

  it('sends only client_id for a public client, and no code_verifier when there is none', async () => {
    answer = () => ({ json: tokens });
    const client = createIdgateClient({ baseUrl: `${baseUrl}/` });
    await client.exchangeCode({ code: 'c', redirectUri, codeVerifier: verifier, clientId: 'spa' });
    expect(onlyForm('/oauth/token').body).toBe(
      'grant_type=authorization_code&code=c&redirect_uri=https%3A%2F%2Fapp.example.com%2Fcb%3Fx%3D1' +
        `&code_verifier=${verifier}&client_id=spa`,
    );
    requests = [];
    await client.exchangeCode({ code: 'c', redirectUri: 'https://a/cb', clientId: 'web', clientSecret: 's' });
    const request = onlyForm('/oauth/token');
    expect(request.body).toBe('grant_type=authorization_code&code=c&redirect_uri=https%3A%2F%2Fa%2Fcb');
    expect(request.headers.authorization).toBe(basic('web', 's'));
  });

  it('rejects a token response without access_token as IdgateSchemaError', async () => {
    answer = () => ({ json: { token_type: 'Bearer', expires_in: 60, id_token: 'x' } });
    const error = await failure(
      createIdgateClient({ baseUrl }).exchangeCode({ code: 'c', redirectUri, clientId: 'spa' }),
      IdgateSchemaError,
    );
    expect(error.endpoint).toBe('POST /oauth/token');
    expect(error.issues.map((issue) => issue.path)).toEqual([['access_token']]);
  });
});

describe('RFC 6749 §6 refresh token grant (refreshToken)', () => {
  it('sends refresh_token and scope, with each client authentication method', async () => {
    answer = () => ({ json: tokens });
    const client = createIdgateClient({ baseUrl });
    expect(await client.refreshToken({ refreshToken: 'rt-1', scope: 'openid', clientId: 'cli' })).toEqual(
      tokens,
    );
    const none = onlyForm('/oauth/token');
    expect(none.body).toBe('grant_type=refresh_token&refresh_token=rt-1&scope=openid&client_id=cli');
    expect(none.headers.authorization).toBeUndefined();

    requests = [];
    await client.refreshToken({ refreshToken: 'rt 1+', clientId: 'web', clientSecret: 'pw' });
    const basicRequest = onlyForm('/oauth/token');
    expect(basicRequest.body).toBe('grant_type=refresh_token&refresh_token=rt+1%2B');
    expect(basicRequest.headers.authorization).toBe(basic('web', 'pw'));

    requests = [];
    await client.refreshToken({
      refreshToken: 'rt',
      clientId: 'web',
      clientSecret: 'pw',
      authMethod: 'client_secret_post',
    });
    expect(onlyForm('/oauth/token').body).toBe(
      'grant_type=refresh_token&refresh_token=rt&client_id=web&client_secret=pw',
    );
  });

  it('surfaces invalid_grant as IdgateHttpError', async () => {
    answer = () => ({
      status: 400,
      json: { error: 'invalid_grant', error_description: 'refresh token revoked' },
    });
    const error = await failure(
      createIdgateClient({ baseUrl }).refreshToken({ refreshToken: 'rt', clientId: 'cli' }),
      IdgateHttpError,
    );
    expect(error.message).toBe('POST /oauth/token failed with 400: invalid_grant (refresh token revoked)');
    expect(error.oauthError?.error).toBe('invalid_grant');
  });

  it('rejects a refresh response whose expires_in is negative as IdgateSchemaError', async () => {
    answer = () => ({ json: { ...tokens, expires_in: -1 } });
    const error = await failure(
      createIdgateClient({ baseUrl }).refreshToken({ refreshToken: 'rt', clientId: 'cli' }),
      IdgateSchemaError,
    );
    expect(error.issues.map((issue) => issue.path)).toEqual([['expires_in']]);
  });
});

describe('OIDC Core §5.3 UserInfo (userinfo)', () => {
  const claims = { sub: 'u1', preferred_username: 'alice', groups: ['dev'], email_verified: true, extra: 1 };

  it('GETs /oauth/userinfo with the access token as Bearer and no body', async () => {
    answer = () => ({ json: claims });
    const client = createIdgateClient({ baseUrl: `${baseUrl}/idgate`, apiKey: 'idg_not_sent' });
    expect(await client.userinfo('eyJ.access.tok')).toEqual(claims);
    expect(requests).toHaveLength(1);
    const request = requests[0] as Recorded;
    expect([request.method, request.path, request.headers.authorization, request.body]).toEqual([
      'GET',
      '/idgate/oauth/userinfo',
      'Bearer eyJ.access.tok',
      '',
    ]);
    expect(request.headers.accept).toBe('application/json');
    expect(request.headers['content-type']).toBeUndefined();
  });

  it('rejects claims without sub, or a JWT instead of JSON, as IdgateSchemaError', async () => {
    const client = createIdgateClient({ baseUrl });
    answer = () => ({ json: { preferred_username: 'alice', groups: 'dev' } });
    const missing = await failure(client.userinfo('t'), IdgateSchemaError);
    expect(missing.endpoint).toBe('GET /oauth/userinfo');
    expect(missing.issues.map((issue) => issue.path)).toEqual([['sub'], ['groups']]);
    expect(missing.message).toMatch(
      /^GET \/oauth\/userinfo returned a response that does not match UserInfo: /,
    );
    answer = () => ({ headers: { 'content-type': 'application/jwt' }, text: 'eyJ.e30.sig' });
    await failure(client.userinfo('t'), IdgateSchemaError);
  });

  it('surfaces the RFC 6750 WWW-Authenticate error of an empty 401 as oauthError', async () => {
    answer = () => ({
      status: 401,
      headers: {
        'www-authenticate':
          'Bearer realm="idgate", error="invalid_token", error_description="The access token expired"',
      },
    });
    const error = await failure(createIdgateClient({ baseUrl }).userinfo('expired.tok'), IdgateHttpError);
    expect(error.status).toBe(401);
    expect(error.endpoint).toBe('GET /oauth/userinfo');
    expect(error.oauthError).toEqual({
      error: 'invalid_token',
      error_description: 'The access token expired',
    });
    expect(error.message).toBe(
      'GET /oauth/userinfo failed with 401: invalid_token (The access token expired)',
    );
    expect(error.body).toBe('');
    expect(error.headers.get('www-authenticate')).toMatch(/^Bearer realm="idgate"/);
  });

  it('surfaces insufficient_scope of a 403 challenge, and prefers an OAuth error body', async () => {
    const client = createIdgateClient({ baseUrl });
    answer = () => ({
      status: 403,
      headers: { 'www-authenticate': 'Bearer error="insufficient_scope", scope="openid"' },
      text: 'forbidden',
    });
    const scope = await failure(client.userinfo('t'), IdgateHttpError);
    expect(scope.oauthError).toEqual({ error: 'insufficient_scope' });
    expect(scope.body).toBe('forbidden');

    answer = () => ({
      status: 401,
      headers: { 'www-authenticate': 'Bearer error="invalid_token"' },
      json: { error: 'invalid_request', error_description: 'from the body' },
    });
    const body = await failure(client.userinfo('t'), IdgateHttpError);
    expect(body.oauthError).toEqual({ error: 'invalid_request', error_description: 'from the body' });
  });

  it('leaves oauthError undefined for a challenge without error (no token sent, RFC 6750 §3.1)', async () => {
    answer = () => ({ status: 401, headers: { 'www-authenticate': 'Bearer realm="idgate"' } });
    const error = await failure(createIdgateClient({ baseUrl }).userinfo('tok-1'), IdgateHttpError);
    expect(error.oauthError).toBeUndefined();
    expect(error.message).toBe('GET /oauth/userinfo failed with 401: Unauthorized');
  });

  it('refuses an empty token, and names (never quotes) a token that cannot be a header value', async () => {
    const client = createIdgateClient({ baseUrl });
    await expect(client.userinfo('')).rejects.toThrow('userinfo needs an access token');
    const error = await failure(client.userinfo('SECRET-TOKEN\r\nx-injected: 1'), IdgateSdkError);
    expect(error.message).toBe(
      'GET /oauth/userinfo failed: the value of header "authorization" is not a valid header value',
    );
    expect(String(error.cause)).not.toContain('SECRET-TOKEN');
    expect(requests).toHaveLength(0);
  });
});

describe('RFC 7009 token revocation (revokeToken)', () => {
  it('POSTs token and token_type_hint with Basic authentication and resolves on an empty 200', async () => {
    answer = () => ({ status: 200 });
    const client = createIdgateClient({ baseUrl });
    await expect(
      client.revokeToken({
        token: 'rt-1',
        tokenTypeHint: 'refresh_token',
        clientId: 'web',
        clientSecret: 'pw',
      }),
    ).resolves.toBeUndefined();
    const request = onlyForm('/oauth/revoke');
    expect(request.body).toBe('token=rt-1&token_type_hint=refresh_token');
    expect(request.headers.authorization).toBe(basic('web', 'pw'));
  });

  it('sends client_id alone for a public client, client_id and client_secret with post', async () => {
    answer = () => ({ status: 200 });
    const client = createIdgateClient({ baseUrl });
    await client.revokeToken({ token: 'at.1', clientId: 'spa' });
    const none = onlyForm('/oauth/revoke');
    expect(none.body).toBe('token=at.1&client_id=spa');
    expect(none.headers.authorization).toBeUndefined();
    requests = [];
    await client.revokeToken({
      token: 'at.1',
      tokenTypeHint: 'access_token',
      clientId: 'web',
      clientSecret: 'p w',
      authMethod: 'client_secret_post',
    });
    expect(onlyForm('/oauth/revoke').body).toBe(
      'token=at.1&token_type_hint=access_token&client_id=web&client_secret=p+w',
    );
  });

  it('resolves on a 200 with any body (JSON, text, even an HTML page)', async () => {
    const client = createIdgateClient({ baseUrl });
    for (const reply of [{ json: {} }, { json: { revoked: true } }, { text: 'ok' }, { text: '<html>' }]) {
      answer = () => reply;
      await expect(client.revokeToken({ token: 't', clientId: 'spa' })).resolves.toBeUndefined();
    }
  });

  it('surfaces unsupported_token_type, and a 503 with its Retry-After (RFC 7009 §2.2.1)', async () => {
    const client = createIdgateClient({ baseUrl, retry: 2 });
    answer = () => ({ status: 400, json: { error: 'unsupported_token_type' } });
    const unsupported = await failure(
      client.revokeToken({ token: 'tok-1', clientId: 'spa' }),
      IdgateHttpError,
    );
    expect(unsupported.message).toBe('POST /oauth/revoke failed with 400: unsupported_token_type');
    requests = [];
    answer = () => ({ status: 503, headers: { 'retry-after': '7' }, text: '' });
    const busy = await failure(client.revokeToken({ token: 'tok-1', clientId: 'spa' }), IdgateHttpError);
    expect([busy.status, busy.headers.get('retry-after')]).toEqual([503, '7']);
    expect(requests).toHaveLength(1);
  });

  it('checks the arguments before sending', async () => {
    const client = createIdgateClient({ baseUrl });
    await expect(client.revokeToken({ token: '', clientId: 'spa' })).rejects.toMatchObject({
      message: 'token must not be empty',
      endpoint: 'POST /oauth/revoke',
    });
    await expect(
      client.revokeToken({ token: 't', clientId: 'web', authMethod: 'client_secret_post' }),
    ).rejects.toMatchObject({
      message: 'authMethod "client_secret_post" needs a clientSecret',
      endpoint: 'POST /oauth/revoke',
    });
    expect(requests).toHaveLength(0);
  });
});

describe('RFC 7662 token introspection (introspectToken)', () => {
  const active = {
    active: true,
    scope: 'openid',
    client_id: 'cli',
    sub: 'u1',
    exp: 2_000_000_000,
    iat: 1_000_000_000,
    aud: ['cli'],
    iss: 'http://127.0.0.1/oauth',
    token_type: 'Bearer',
  };

  it('POSTs token and token_type_hint with Basic authentication by default', async () => {
    answer = () => ({ json: active });
    const client = createIdgateClient({ baseUrl });
    expect(
      await client.introspectToken({
        token: 'eyJ.a.b',
        tokenTypeHint: 'access_token',
        clientId: 'api',
        clientSecret: 'é:€',
      }),
    ).toEqual(active);
    const request = onlyForm('/oauth/introspect');
    expect(request.body).toBe('token=eyJ.a.b&token_type_hint=access_token');
    expect(request.headers.authorization).toBe(basic('api', '%C3%A9%3A%E2%82%AC'));
  });

  it('sends the credentials in the body with client_secret_post, and returns { active: false } as is', async () => {
    answer = () => ({ json: { active: false } });
    const result = await createIdgateClient({ baseUrl }).introspectToken({
      token: 'rt',
      clientId: 'api',
      clientSecret: 's',
      authMethod: 'client_secret_post',
    });
    expect(result).toEqual({ active: false });
    const request = onlyForm('/oauth/introspect');
    expect(request.body).toBe('token=rt&client_id=api&client_secret=s');
    expect(request.headers.authorization).toBeUndefined();
  });

  it('rejects a response without a boolean active as IdgateSchemaError', async () => {
    const client = createIdgateClient({ baseUrl });
    for (const json of [{ sub: 'u1' }, { active: 'true' }, { active: true, exp: 'soon' }]) {
      answer = () => ({ json });
      const error = await failure(
        client.introspectToken({ token: 't', clientId: 'api', clientSecret: 's' }),
        IdgateSchemaError,
      );
      expect(error.endpoint).toBe('POST /oauth/introspect');
    }
  });

  it('surfaces invalid_client as IdgateHttpError, and needs a client secret', async () => {
    answer = () => ({
      status: 401,
      headers: { 'www-authenticate': 'Basic realm="idgate"' },
      json: { error: 'invalid_client' },
    });
    const client = createIdgateClient({ baseUrl });
    const error = await failure(
      client.introspectToken({ token: 't', clientId: 'api', clientSecret: 'wrong' }),
      IdgateHttpError,
    );
    expect(error.oauthError).toEqual({ error: 'invalid_client' });
    requests = [];
    await expect(
      // a JavaScript caller may leave the secret out
      client.introspectToken({ token: 't', clientId: 'api' } as never),
    ).rejects.toThrow('authMethod "client_secret_basic" needs a clientSecret');
    expect(requests).toHaveLength(0);
  });
});

describe('no token, code, verifier or secret in any error message', () => {
  const secrets = {
    code: 'CODE-0001',
    codeVerifier: 'VERIFIER-0002-abcdefghijklmnopqrstuvwxyz0123456789',
    refreshToken: 'REFRESH+0003',
    accessToken: 'ACCESS.0004',
    clientSecret: 'CLIENT-SECRET:0005',
  };
  const echo = (req: IncomingMessage, body: string) =>
    `auth=${req.headers.authorization ?? ''} raw=${body} decoded=${decodeURIComponent(body.replace(/\+/g, ' '))}`;
  const assertClean = (error: Error) => {
    const basicCredentials = Buffer.from(`c:${encodeURIComponent(secrets.clientSecret)}`).toString('base64');
    for (const text of [error.message, error.stack ?? '', String(error)]) {
      for (const secret of [...Object.values(secrets), basicCredentials, 'REFRESH%2B0003', 'SECRET%3A0005']) {
        expect(text).not.toContain(secret);
      }
    }
    expect(error.message).toContain('[redacted]');
  };

  it('redacts what a server echoes back from each call, in OAuth errors and text bodies', async () => {
    const client = createIdgateClient({ baseUrl });
    const { clientSecret } = secrets;
    const calls = [
      () =>
        client.exchangeCode({
          code: secrets.code,
          redirectUri: 'https://a/cb',
          codeVerifier: secrets.codeVerifier,
          clientId: 'c',
          clientSecret,
        }),
      () => client.refreshToken({ refreshToken: secrets.refreshToken, clientId: 'c', clientSecret }),
      () =>
        client.revokeToken({
          token: secrets.refreshToken,
          clientId: 'c',
          clientSecret,
          authMethod: 'client_secret_post',
        }),
      () => client.introspectToken({ token: secrets.accessToken, clientId: 'c', clientSecret }),
      () => client.userinfo(secrets.accessToken),
    ];
    for (const call of calls) {
      answer = (req, body) => ({
        status: 400,
        json: { error: 'invalid_request', error_description: echo(req, body) },
      });
      assertClean(await failure(call(), IdgateHttpError));
      answer = (req, body) => ({ status: 500, text: echo(req, body) });
      assertClean(await failure(call(), IdgateHttpError));
    }
    answer = (req) => ({
      status: 401,
      headers: {
        'www-authenticate': `Bearer error="invalid_token", error_description="${req.headers.authorization}"`,
      },
    });
    assertClean(await failure(client.userinfo(secrets.accessToken), IdgateHttpError));
  });
});

describe('RFC 9110 §11.6.1 WWW-Authenticate parsing', () => {
  it.each([
    ['Bearer', {}],
    ['bearer error="invalid_token"', { error: 'invalid_token' }],
    [
      'Bearer error=invalid_token, error_description="a \\"quoted\\" \\\\ text, with commas"',
      {
        error: 'invalid_token',
        error_description: 'a "quoted" \\ text, with commas',
      },
    ],
    [
      'Basic realm="a, Bearer error=x", Bearer realm="b", ERROR = "insufficient_scope"',
      {
        realm: 'b',
        error: 'insufficient_scope',
      },
    ],
    ['Negotiate abc+/==, Bearer error="invalid_token"', { error: 'invalid_token' }],
    ['Bearer error="first", error="second"', { error: 'first' }],
    ['Bearer error="unterminated', { error: 'unterminated' }],
    ['Bearer @@@, error="after garbage"', { error: 'after garbage' }],
  ])('parses %s', (header, params) => {
    expect(bearerChallengeParams(header)).toEqual(params);
  });

  it.each(['', 'Basic realm="x"', 'error="invalid_token"', 'Negotiate Bearer=='])(
    'finds no Bearer challenge in %j',
    (header) => {
      expect(bearerChallengeParams(header)).toBeUndefined();
    },
  );
});
