import { createServer, type Server } from 'node:http';
import Provider, { type Configuration } from 'oidc-provider';
import { freePort } from './server.js';

/** An account of the upstream provider. */
export interface UpstreamAccount {
  sub: string;
  preferred_username: string;
  email?: string;
  email_verified?: boolean;
  name?: string;
  groups?: string[];
  /** An `amr` the account's claims (so userinfo) carry, apart from how the interaction signed in. */
  amr?: string[];
}

/**
 * node-oidc-provider as a real upstream OpenID Connect provider on loopback. Its interaction
 * endpoint signs in `nextAccount` and grants what is asked without a page, so tests drive the
 * whole redirect dance with plain HTTP.
 */
export interface UpstreamOidc {
  issuer: string;
  clientId: string;
  clientSecret: string;
  provider: Provider;
  accounts: Map<string, UpstreamAccount>;
  /** Who the next interaction signs in; `null` makes it answer `access_denied`. */
  nextAccount: string | null;
  /** How the next interactions say the person signed in: the ID token's `amr` and `acr`. */
  nextLogin: { amr?: string[]; acr?: string };
  /** Every request the upstream received, as `METHOD /path`. */
  requests: string[];
  /** The W3C `traceparent` header of each request that carried one, as `METHOD /path` and its value. */
  traceparents: Array<{ request: string; traceparent: string }>;
  /** Stops listening, ending every connection: connections to its port are refused until {@link up}. */
  down(): Promise<void>;
  /** Listens on the same port again (if it was down): same issuer, keys, accounts and upstream grants. */
  up(): Promise<void>;
  stop(): Promise<void>;
}

export async function startUpstreamOidc(options: {
  redirectUris: string[];
  clientId?: string;
  clientSecret?: string;
  /** Issue refresh tokens to idgate's client (for re-validation on refresh). */
  refreshTokens?: boolean;
  /** Rotate the refresh token at every use (a spent one presented again is refused). */
  rotateRefreshTokens?: boolean;
}): Promise<UpstreamOidc> {
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const clientId = options.clientId ?? 'idgate';
  const clientSecret = options.clientSecret ?? 'upstream-client-secret-0123456789';
  const accounts = new Map<string, UpstreamAccount>();
  const configuration: Configuration = {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: options.redirectUris,
        grant_types: options.refreshTokens ? ['authorization_code', 'refresh_token'] : ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
      {
        client_id: 'someone-else',
        client_secret: 'someone-else-secret-0123456789',
        redirect_uris: ['http://127.0.0.1/cb'],
        grant_types: ['authorization_code'],
        response_types: ['code'],
      },
    ],
    claims: {
      // How the person signed in (see `nextLogin`), in the ID token when the interaction says.
      openid: ['sub', 'acr', 'amr'],
      profile: ['preferred_username', 'name'],
      email: ['email', 'email_verified'],
      groups: ['groups'],
    },
    scopes: ['openid', 'profile', 'email', 'groups'],
    conformIdTokenClaims: false,
    // Without offline_access in the scope: idgate asks the upstream for what its provider config says.
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    ...(options.rotateRefreshTokens ? { rotateRefreshToken: true } : {}),
    features: { devInteractions: { enabled: false }, introspection: { enabled: true } },
    pkce: { required: () => true },
    cookies: { keys: ['upstream-cookie-key-0123456789abcdef'] },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    findAccount: async (_ctx, sub) => {
      const account = accounts.get(sub);
      return account === undefined ? undefined : { accountId: sub, claims: async () => ({ ...account }) };
    },
    ttl: {
      AccessToken: 600,
      AuthorizationCode: 60,
      IdToken: 600,
      Interaction: 600,
      Session: 600,
      Grant: 600,
    },
  };
  const provider = new Provider(issuer, configuration);
  const upstream: UpstreamOidc = {
    issuer,
    clientId,
    clientSecret,
    provider,
    accounts,
    nextAccount: null,
    nextLogin: {},
    requests: [],
    traceparents: [],
    down: async () => {},
    up: async () => {},
    stop: async () => {},
  };
  const callback = provider.callback();
  const server: Server = createServer(async (req, res) => {
    const request = `${req.method} ${new URL(req.url ?? '/', issuer).pathname}`;
    upstream.requests.push(request);
    const { traceparent } = req.headers;
    if (typeof traceparent === 'string') upstream.traceparents.push({ request, traceparent });
    if (!req.url?.startsWith('/interaction/')) return callback(req, res);
    try {
      const details = await provider.interactionDetails(req, res);
      if (upstream.nextAccount === null) {
        return await provider.interactionFinished(
          req,
          res,
          { error: 'access_denied', error_description: 'the user said no' },
          { mergeWithLastSubmission: false },
        );
      }
      const accountId = upstream.nextAccount;
      const grant = new provider.Grant({ accountId, clientId: details.params.client_id as string });
      grant.addOIDCScope(String(details.params.scope));
      const grantId = await grant.save();
      await provider.interactionFinished(
        req,
        res,
        { login: { accountId, ...upstream.nextLogin }, consent: { grantId } },
        { mergeWithLastSubmission: false },
      );
    } catch (error) {
      res.statusCode = 500;
      res.end(String(error));
    }
  });
  const listen = async () => {
    if (server.listening) return;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  };
  await listen();
  upstream.stop = () => new Promise((resolve) => server.close(() => resolve()));
  upstream.down = () => {
    server.closeAllConnections();
    return upstream.stop();
  };
  upstream.up = listen;
  return upstream;
}
