import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider, { type Configuration, type KoaContextWithOIDC } from 'oidc-provider';

/**
 * The OpenID provider the plugin's integration tests sign in at. Tests see only this interface, so
 * the same tests can run against any provider that has the device authorization grant (RFC 8628),
 * loopback redirects for native apps (RFC 8252), resource indicators on the code and refresh grants
 * (RFC 8707), refresh token rotation and revocation (RFC 7009); today it is node-oidc-provider.
 */
export interface TestIssuer {
  issuer: string;
  /** A public client with loopback redirects and the device_code, authorization_code and refresh_token grants. */
  clientId: string;
  /** Requests the provider received, as `METHOD /path`, in order (the JWKS too). */
  requests: string[];
  /** Token endpoint requests by grant type, in order (answered and refused). */
  grants: string[];
  /** Who the next sign-in is; `null` makes the provider deny it. */
  nextAccount: string | null;
  /** Completes a device sign-in on the provider's verification page, as a person would: open, confirm or deny. */
  approveDevice(verificationUri: string, options?: { deny?: boolean }): Promise<void>;
  /** Follows an authorization URL through the provider's sign-in to the client's redirect; returns the final response. */
  followAuthorization(url: string): Promise<Response>;
  /** Lifetime of the access tokens, in seconds. */
  accessTokenTtl: number;
  /**
   * When set, every refresh is refused as idgate refuses one for a cluster that requires a second
   * factor: `invalid_grant` whose description ends with `acr_values=<this>`. Its tokens never
   * carry that `acr`.
   */
  refuseRefreshFor: string | undefined;
  stop(): Promise<void>;
}

export async function startOidcProviderIssuer(
  options: { accessTokenTtl?: number } = {},
): Promise<TestIssuer> {
  const accessTokenTtl = options.accessTokenTtl ?? 300;
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientId = 'kubectl';
  const accounts: Record<string, { preferred_username: string; groups: string[]; email: string }> = {
    alice: { preferred_username: 'alice', groups: ['developers'], email: 'alice@example.com' },
  };
  const configuration: Configuration = {
    clients: [
      {
        client_id: clientId,
        application_type: 'native',
        token_endpoint_auth_method: 'none',
        // RFC 8252 §7.3: a native client's loopback redirect matches on any port
        redirect_uris: ['http://127.0.0.1/callback'],
        grant_types: ['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code'],
        response_types: ['code'],
      },
    ],
    claims: {
      openid: ['sub'],
      profile: ['preferred_username'],
      email: ['email'],
      groups: ['groups'],
    },
    scopes: ['openid', 'profile', 'email', 'groups', 'offline_access'],
    features: {
      devInteractions: { enabled: false },
      deviceFlow: { enabled: true },
      revocation: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => undefined,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resource) => ({
          scope: 'groups',
          audience: resource,
          accessTokenTTL: accessTokenTtl,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        }),
      },
    },
    pkce: { required: () => true },
    // refresh tokens for every sign-in of a client allowed to refresh (oidc-provider otherwise
    // wants prompt=consent with offline_access), rotated on every use; reuse revokes the grant
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: true,
    cookies: { keys: ['kubectl-test-cookie-key-0123456789'] },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    findAccount: async (_ctx, sub) => {
      const account = accounts[sub];
      return account === undefined
        ? undefined
        : { accountId: sub, claims: async () => ({ sub, ...account }) };
    },
    ttl: {
      AccessToken: accessTokenTtl,
      AuthorizationCode: 60,
      DeviceCode: 600,
      IdToken: 600,
      Interaction: 600,
      Session: 600,
      Grant: 86_400,
      RefreshToken: 86_400,
    },
  };
  const provider = new Provider(issuer, configuration);
  // Refuses before the provider sees the request, so that, as at idgate, a refused refresh does not
  // use up its refresh token (the body read here is handed on as an already parsed one).
  provider.use(async (ctx, next) => {
    const acr = testIssuer.refuseRefreshFor;
    if (acr === undefined || ctx.path !== '/token' || ctx.method !== 'POST') return next();
    const chunks: Buffer[] = [];
    for await (const chunk of ctx.req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    (ctx.req as typeof ctx.req & { body?: string }).body = body;
    if (new URLSearchParams(body).get('grant_type') !== 'refresh_token') return next();
    testIssuer.grants.push('refresh_token');
    ctx.status = 400;
    ctx.body = {
      error: 'invalid_grant',
      error_description: `cluster alpha requires a sign-in with a second factor (acr ${acr}), and this grant's sign-in had none: sign in again (authorization code or device flow) with acr_values=${acr}`,
    };
  });
  const callback = provider.callback();
  const recordGrant = (ctx: KoaContextWithOIDC) => {
    testIssuer.grants.push(String(ctx.oidc.params?.grant_type ?? ''));
  };
  provider.on('grant.success', recordGrant);
  provider.on('grant.error', recordGrant);
  const testIssuer: TestIssuer = {
    issuer,
    clientId,
    requests: [],
    grants: [],
    nextAccount: 'alice',
    accessTokenTtl,
    refuseRefreshFor: undefined,
    approveDevice: (uri, approveOptions) => approveDevice(uri, approveOptions?.deny === true),
    followAuthorization: async (url) => {
      const jar = new Map<string, string>();
      return follow(jar, url);
    },
    stop: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  server.on('request', async (req, res) => {
    const path = new URL(req.url ?? '/', issuer).pathname;
    testIssuer.requests.push(`${req.method} ${path}`);
    if (!path.startsWith('/interaction/')) return callback(req, res);
    try {
      const details = await provider.interactionDetails(req, res);
      if (testIssuer.nextAccount === null) {
        return await provider.interactionFinished(req, res, {
          error: 'access_denied',
          error_description: 'the user said no',
        });
      }
      const accountId = testIssuer.nextAccount;
      const grant = new provider.Grant({ accountId, clientId: String(details.params.client_id) });
      grant.addOIDCScope(String(details.params.scope));
      const resources = [details.params.resource ?? []].flat().map(String);
      for (const resource of resources) grant.addResourceScope(resource, 'groups');
      const grantId = await grant.save();
      await provider.interactionFinished(req, res, { login: { accountId }, consent: { grantId } });
    } catch (error) {
      res.statusCode = 500;
      res.end(String(error));
    }
  });

  /** Follows redirects with a cookie jar, like a browser; stops at the first response that is not a redirect. */
  async function follow(jar: Map<string, string>, start: string, init: RequestInit = {}): Promise<Response> {
    let url = start;
    let request: RequestInit = init;
    for (let hop = 0; hop < 20; hop += 1) {
      const headers = new Headers(request.headers);
      const origin = new URL(url).origin;
      if (origin === issuer && jar.size > 0) {
        headers.set('cookie', [...jar].map(([name, value]) => `${name}=${value}`).join('; '));
      }
      const response = await fetch(url, { ...request, headers, redirect: 'manual' });
      if (origin === issuer) {
        for (const cookie of response.headers.getSetCookie()) {
          const [pair = ''] = cookie.split(';');
          const index = pair.indexOf('=');
          jar.set(pair.slice(0, index), pair.slice(index + 1));
        }
      }
      const location = response.headers.get('location');
      if (response.status < 300 || response.status >= 400 || location === null) return response;
      url = new URL(location, url).href;
      request = {};
    }
    throw new Error('too many redirects');
  }

  /** The first form of an HTML page: its action and every input with a value. */
  function form(html: string, base: string): { action: string; fields: URLSearchParams } {
    const action = /<form[^>]*action="([^"]*)"/i.exec(html)?.[1];
    if (action === undefined) throw new Error(`no form on the page: ${html.slice(0, 300)}`);
    const fields = new URLSearchParams();
    for (const input of html.matchAll(/<input[^>]*>/gi)) {
      const name = /name="([^"]*)"/.exec(input[0])?.[1];
      const value = /value="([^"]*)"/.exec(input[0])?.[1];
      if (name !== undefined && value !== undefined && !/type="submit"/.test(input[0]))
        fields.set(name, value);
    }
    return { action: new URL(action.replace(/&amp;/g, '&'), base).href, fields };
  }

  async function approveDevice(uri: string, deny: boolean): Promise<void> {
    const jar = new Map<string, string>();
    // the page with ?user_code= posts the code back by itself (a form_post page)
    const prefilled = await follow(jar, uri);
    const first = form(await prefilled.text(), uri);
    const confirmPage = await follow(jar, first.action, { method: 'POST', body: first.fields });
    const confirm = form(await confirmPage.text(), first.action);
    confirm.fields.set(deny ? 'abort' : 'confirm', 'yes');
    const done = await follow(jar, confirm.action, { method: 'POST', body: confirm.fields });
    const text = await done.text();
    if (done.status !== 200)
      throw new Error(`the device page answered ${done.status}: ${text.slice(0, 300)}`);
  }

  return testIssuer;
}
