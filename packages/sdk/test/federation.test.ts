import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  createIdgateAdminClient,
  createIdgateClient,
  IdgateHttpError,
  IdgateRedirectError,
  IdgateSchemaError,
  IdgateSdkError,
} from '../src/index.js';

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
  headers?: Record<string, string>;
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
      const reply = (replies.length > 1 ? replies.shift() : replies[0]) ?? { status: 404 };
      const type = reply.json === undefined ? {} : { 'content-type': 'application/json' };
      res.writeHead(reply.status ?? 200, { ...type, ...reply.headers });
      res.end(reply.json === undefined ? '' : JSON.stringify(reply.json));
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
async function failure<T extends Error>(promise: Promise<unknown>, type: new (...args: never[]) => T) {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(type);
  expect(error).toBeInstanceOf(IdgateSdkError);
  return error as T;
}

// ---- canned bodies -----------------------------------------------------------------------------
const tokens = { access_token: 'at', token_type: 'Bearer', expires_in: 600, scope: 'openid' };
const github = {
  name: 'github',
  type: 'github',
  source: 'database',
  config: { name: 'github', type: 'github', clientId: 'Iv1.x', clientSecret: '[set]' },
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
  etag: '"0123456789abcdef"',
};
const identity = {
  provider: 'github',
  subject: '583231',
  userId: 'u1',
  username: 'octocat',
  email: null,
  groups: ['acme'],
  linkedAt: '2026-01-01T00:00:00.000Z',
  lastLoginAt: null,
};
const admin = () => createIdgateAdminClient({ baseUrl, apiKey: 'idg_admin_key' });

describe('callback (GET /oauth/callback/{provider})', () => {
  it('forwards the query as is, sends no API key and validates the tokens', async () => {
    replies = [{ json: tokens }];
    const client = createIdgateClient({ baseUrl, apiKey: 'idg_review_key' });
    expect(await client.callback('github', { code: 'c 1', state: 's/2' })).toEqual(tokens);
    const request = only();
    expect([request.method, request.path, request.headers.accept]).toEqual([
      'GET',
      '/oauth/callback/github?code=c+1&state=s%2F2',
      'application/json',
    ]);
    expect(request.headers.authorization).toBeUndefined();
  });

  it('takes URLSearchParams, repeated parameters included', async () => {
    replies = [{ json: tokens }];
    const query = new URLSearchParams('access_token=gho_x&token_type=bearer&state=s&x=1&x=2');
    await createIdgateClient({ baseUrl }).callback('corp-sso', query);
    expect(only().path).toBe('/oauth/callback/corp-sso?access_token=gho_x&token_type=bearer&state=s&x=1&x=2');
  });

  it.each(['GitHub', '../admin', 'a/b', '', '1st', 'a'.repeat(64)])(
    'rejects the provider name %j before sending anything',
    async (name) => {
      const error = await failure(createIdgateClient({ baseUrl }).callback(name, {}), IdgateSdkError);
      expect(error.message).toMatch(/^provider must be an identity provider name/);
      expect(requests).toHaveLength(0);
    },
  );

  it('does not follow a redirect: IdgateRedirectError with the location, never in the message', async () => {
    replies = [{ status: 303, headers: { location: '/app/cb?code=secret-code&state=s' } }];
    const client = createIdgateClient({ baseUrl });
    const error = await failure(client.callback('github', { code: 'up', state: 's' }), IdgateRedirectError);
    expect(error.status).toBe(303);
    expect(error.location).toBe(`${baseUrl}/app/cb?code=secret-code&state=s`);
    expect(error.endpoint).toBe('GET /oauth/callback/github');
    expect(error.message).toMatch(
      /^GET \/oauth\/callback\/github answered a redirect: .*authorization request/,
    );
    expect(error.message).not.toContain('secret-code');
    expect(error).not.toBeInstanceOf(IdgateHttpError);
    expect(only().path).toBe('/oauth/callback/github?code=up&state=s');
  });

  it('maps a refusal to IdgateHttpError with the OAuth error, the code redacted', async () => {
    replies = [
      { status: 400, json: { error: 'invalid_request', error_description: 'bad code upstream-code-1' } },
    ];
    const client = createIdgateClient({ baseUrl });
    const error = await failure(
      client.callback('github', { code: 'upstream-code-1', state: 's' }),
      IdgateHttpError,
    );
    expect(error.status).toBe(400);
    expect(error.oauthError?.error).toBe('invalid_request');
    expect(error.message).toBe(
      'GET /oauth/callback/github failed with 400: invalid_request (bad code [redacted])',
    );
  });

  it('is never retried, even with retry set (a state is good once)', async () => {
    replies = [{ status: 503, json: { error: 'temporarily_unavailable' } }, { json: tokens }];
    const client = createIdgateClient({ baseUrl, retry: 2 });
    await failure(client.callback('github', { code: 'c', state: 's' }), IdgateHttpError);
    expect(requests).toHaveLength(1);
  });
});

describe('identity provider admin API', () => {
  it('is a client of its own that needs an API key, refused before sending anything', async () => {
    for (const apiKey of [undefined, '']) {
      const create = () => createIdgateAdminClient({ baseUrl, apiKey: apiKey as unknown as string });
      expect(create).toThrow(IdgateSdkError);
      expect(create).toThrow('createIdgateAdminClient needs an API key: pass { apiKey }');
    }
    // the relying party's client has none of the admin methods; the admin client has no callback
    const client = createIdgateClient({ baseUrl, apiKey: 'idg_review_key' }) as unknown as Record<
      string,
      unknown
    >;
    for (const method of ['listIdentityProviders', 'createIdentityProvider', 'listUserIdentities'])
      expect(client[method]).toBeUndefined();
    expect((admin() as unknown as Record<string, unknown>).callback).toBeUndefined();
    expect(requests).toHaveLength(0);
  });

  it('lists providers with the Bearer API key and validates every item', async () => {
    replies = [{ json: { items: [github] } }];
    expect(await admin().listIdentityProviders()).toEqual({ items: [github] });
    const request = only();
    expect([request.method, request.path, request.headers.authorization]).toEqual([
      'GET',
      '/admin/v1/identity-providers',
      'Bearer idg_admin_key',
    ]);
  });

  it.each([
    [{ items: [github, { ...github, source: 'elsewhere' }] }, 'items.1.source'],
    [{ providers: [] }, 'items: must be an array'],
  ])('rejects a listing that does not match: %j', async (body, where) => {
    replies = [{ json: body }];
    const error = await failure(admin().listIdentityProviders(), IdgateSchemaError);
    expect(error.message).toContain(where);
    expect(error.message).toContain('{ items: IdentityProvider[] }');
  });

  it('gets one provider, and maps a 404 problem', async () => {
    replies = [{ json: github }];
    expect(await admin().getIdentityProvider('github')).toEqual(github);
    expect(only().path).toBe('/admin/v1/identity-providers/github');
    requests = [];
    replies = [
      {
        status: 404,
        headers: { 'content-type': 'application/problem+json' },
        json: {
          type: 'about:blank',
          title: 'Not Found',
          status: 404,
          detail: 'there is no identity provider nope',
          code: 'identity_provider_not_found',
        },
      },
    ];
    const error = await failure(admin().getIdentityProvider('nope'), IdgateHttpError);
    expect(error.status).toBe(404);
    expect(error.problem?.code).toBe('identity_provider_not_found');
  });

  it.each(['..', '.', 'a/b', 'a?b', '', 'gh%2F'])(
    'refuses the name %j before sending anything',
    async (name) => {
      const client = admin();
      await failure(client.getIdentityProvider(name), IdgateSdkError);
      await failure(client.setIdentityProviderDisabled(name, true), IdgateSdkError);
      await failure(client.updateIdentityProvider(name, {}), IdgateSdkError);
      await failure(client.deleteIdentityProvider(name), IdgateSdkError);
      expect(requests).toHaveLength(0);
    },
  );

  it('creates a provider from its configuration as JSON', async () => {
    replies = [{ status: 201, json: github }];
    const config = { type: 'github', name: 'github', clientId: 'Iv1.x', clientSecret: 'gh-secret' } as const;
    expect(await admin().createIdentityProvider(config)).toEqual(github);
    const request = only();
    expect([request.method, request.path, request.headers['content-type']]).toEqual([
      'POST',
      '/admin/v1/identity-providers',
      'application/json',
    ]);
    expect(JSON.parse(request.body)).toEqual(config);
  });

  it('never puts a client secret or a bind password in an error message', async () => {
    const echo = (detail: string) => ({
      status: 400,
      headers: { 'content-type': 'application/problem+json' },
      json: {
        type: 'about:blank',
        title: 'Bad Request',
        status: 400,
        detail,
        code: 'invalid_identity_provider',
      },
    });
    replies = [echo('clientSecret "s3cr\\"et" and idg_admin_key are wrong')];
    const oidc = admin().createIdentityProvider({
      type: 'oidc',
      name: 'corp',
      issuer: 'not a url',
      clientId: 'x',
      clientSecret: 's3cr"et',
    });
    const first = await failure(oidc, IdgateHttpError);
    expect(first.message).toBe(
      'POST /admin/v1/identity-providers failed with 400: invalid_identity_provider (clientSecret "[redacted]" and [redacted] are wrong)',
    );
    replies = [echo('bindPassword ldap-bind-pw is wrong')];
    const ldap = admin().createIdentityProvider({
      type: 'ldap',
      name: 'corp-ldap',
      url: 'ldap://ldap',
      bindDn: 'cn=admin',
      bindPassword: 'ldap-bind-pw',
      userSearch: { baseDn: 'dc=example' },
    });
    const second = await failure(ldap, IdgateHttpError);
    expect(second.message).not.toContain('ldap-bind-pw');
    expect(second.message).toContain('bindPassword [redacted] is wrong');
  });

  it('updates with a JSON PATCH, If-Match when given, never retried, the new secret redacted', async () => {
    replies = [{ json: { ...github, etag: '"fedcba9876543210"' } }];
    const patch = { clientSecret: 'rotated-secret', displayName: null };
    const updated = await admin().updateIdentityProvider('GitHub', patch, { ifMatch: github.etag });
    expect(updated.etag).toBe('"fedcba9876543210"');
    const request = only();
    expect([
      request.method,
      request.path,
      request.headers['content-type'],
      request.headers['if-match'],
    ]).toEqual(['PATCH', '/admin/v1/identity-providers/GitHub', 'application/json', github.etag]);
    expect(JSON.parse(request.body)).toEqual(patch);

    requests = [];
    replies = [
      {
        status: 412,
        headers: { 'content-type': 'application/problem+json' },
        json: {
          title: 'Precondition Failed',
          status: 412,
          detail: 'rotated-secret?',
          code: 'precondition_failed',
        },
      },
      { json: github },
    ];
    const client = createIdgateAdminClient({ baseUrl, apiKey: 'idg_admin_key', retry: 2 });
    const stale = await failure(client.updateIdentityProvider('github', patch), IdgateHttpError);
    expect([stale.status, stale.problem?.code]).toEqual([412, 'precondition_failed']);
    expect(stale.message).not.toContain('rotated-secret');
    expect(requests).toHaveLength(1);
    expect(requests[0]?.headers['if-match']).toBeUndefined();

    for (const bad of [null, ['displayName'], 'displayName']) {
      const refused = await failure(
        admin().updateIdentityProvider('github', bad as unknown as Record<string, unknown>),
        IdgateSdkError,
      );
      expect(refused.message).toBe('patch must be an object of the fields to change');
    }
    expect(requests).toHaveLength(1);
  });

  it('disables and enables by POSTing without a body', async () => {
    replies = [{ json: { ...github, config: { ...github.config, disabled: true } } }];
    const disabled = await admin().setIdentityProviderDisabled('github', true);
    expect(disabled.config.disabled).toBe(true);
    replies = [{ json: github }];
    await admin().setIdentityProviderDisabled('GitHub', false);
    expect(requests.map((r) => `${r.method} ${r.path} ${r.body.length}`)).toEqual([
      'POST /admin/v1/identity-providers/github/disable 0',
      'POST /admin/v1/identity-providers/GitHub/enable 0',
    ]);
  });

  it('deletes with DELETE, accepts 204, and never retries it', async () => {
    replies = [{ status: 204 }];
    await expect(admin().deleteIdentityProvider('github')).resolves.toBeUndefined();
    expect([only().method, only().path]).toEqual(['DELETE', '/admin/v1/identity-providers/github']);
    requests = [];
    replies = [{ status: 503 }, { status: 204 }];
    const client = createIdgateAdminClient({ baseUrl, apiKey: 'idg_admin_key', retry: 2 });
    await failure(client.deleteIdentityProvider('github'), IdgateHttpError);
    expect(requests).toHaveLength(1);
  });

  it("lists a user's identities, the username encoded, and checks it first", async () => {
    replies = [{ json: { items: [identity] } }];
    expect(await admin().listUserIdentities('alice@example.com')).toEqual({ items: [identity] });
    expect(only().path).toBe('/admin/v1/users/alice%40example.com/identities');
    requests = [];
    for (const bad of ['..', 'a/b', '']) await failure(admin().listUserIdentities(bad), IdgateSdkError);
    expect(requests).toHaveLength(0);
  });
});
