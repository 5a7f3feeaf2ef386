import {
  Jwks,
  ProviderMetadata,
  type TokenRequest,
  TokenResponse,
  TokenReviewResponse,
} from '@idgate/schema';
import { basicAuthorization, type FormValue, formBody } from './encoding.js';
import { IdgateError } from './errors.js';
import { send, type TransportOptions } from './http.js';
import type {
  ClientAuthentication,
  ClientAuthMethod,
  ClientCredentialsGrantOptions,
  IdgateClient,
  IdgateClientOptions,
  PasswordGrantOptions,
  ReviewTokenOptions,
} from './types.js';

const DEFAULT_TIMEOUT_MS = 10_000;
const FORM = 'application/x-www-form-urlencoded';
/** Request fields that are credentials: redacted from every error message. */
const SECRET_FIELDS = ['password', 'client_secret', 'refresh_token', 'code', 'code_verifier'] as const;

/**
 * Creates a client of the idgate server at `baseUrl`. Runs in any runtime with `fetch`
 * (browsers, Node 20+, Deno, Bun, workers).
 * @throws {IdgateError} when `baseUrl` is not an absolute http(s) URL, or `timeoutMs`/`retry` is invalid.
 * @example
 * import { createIdgateClient } from '@idgate/sdk';
 *
 * const idgate = createIdgateClient({ baseUrl: 'http://localhost:8080', apiKey: 'idg_…' });
 * const { access_token } = await idgate.clientCredentialsGrant({ clientId: 'ci', clientSecret: 's3cret' });
 * const review = await idgate.reviewToken(access_token);
 * console.log(review.status.authenticated, review.status.user?.username);
 */
export function createIdgateClient(options: IdgateClientOptions): IdgateClient {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const retry = options.retry ?? 0;
  if (!Number.isInteger(timeoutMs) || timeoutMs <= 0 || timeoutMs > 2_147_483_647) {
    throw new IdgateError('timeoutMs must be a positive integer number of milliseconds');
  }
  if (!Number.isInteger(retry) || retry < 0) throw new IdgateError('retry must be a non-negative integer');
  const transport: TransportOptions = {
    root: serverRoot(options.baseUrl),
    fetch: options.fetch,
    timeoutMs,
    retry,
    headers: { ...options.headers },
  };
  return new Client(transport, options.apiKey);
}

/** `baseUrl` as a URL whose path ends with `/`, so that relative endpoint paths resolve below it. */
function serverRoot(baseUrl: string | URL): URL {
  let root: URL;
  try {
    root = new URL(baseUrl);
  } catch (error) {
    throw new IdgateError('baseUrl must be an absolute http(s) URL', { cause: error });
  }
  if (root.protocol !== 'http:' && root.protocol !== 'https:') {
    throw new IdgateError('baseUrl must be an absolute http(s) URL');
  }
  root.search = '';
  root.hash = '';
  if (!root.pathname.endsWith('/')) root.pathname += '/';
  return root;
}

class Client implements IdgateClient {
  readonly #transport: TransportOptions;
  readonly #apiKey: string | undefined;

  constructor(transport: TransportOptions, apiKey: string | undefined) {
    this.#transport = transport;
    this.#apiKey = apiKey;
  }

  getProviderMetadata(): Promise<ProviderMetadata> {
    return send(this.#transport, {
      method: 'GET',
      path: 'oauth/.well-known/openid-configuration',
      schema: ProviderMetadata,
      schemaName: 'ProviderMetadata',
      secrets: [this.#apiKey],
    });
  }

  getJwks(): Promise<Jwks> {
    return send(this.#transport, {
      method: 'GET',
      path: 'oauth/keys',
      schema: Jwks,
      schemaName: 'Jwks',
      secrets: [this.#apiKey],
    });
  }

  async reviewToken(token: string, options: ReviewTokenOptions = {}): Promise<TokenReviewResponse> {
    const apiKey = this.#apiKey;
    if (!apiKey) {
      throw new IdgateError('reviewToken needs an API key: pass { apiKey } to createIdgateClient', {
        endpoint: 'POST /oauth/authenticate',
      });
    }
    const review = {
      apiVersion: options.apiVersion ?? 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      spec: options.audiences === undefined ? { token } : { token, audiences: options.audiences },
    };
    return send(this.#transport, {
      method: 'POST',
      path: 'oauth/authenticate',
      schema: TokenReviewResponse,
      schemaName: 'TokenReviewResponse',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(review),
      secrets: [apiKey, token],
    });
  }

  async requestToken(request: TokenRequest, clientAuth?: ClientAuthentication): Promise<TokenResponse> {
    if (clientAuth && (request.client_id !== undefined || request.client_secret !== undefined)) {
      throw new IdgateError(
        'pass client credentials either in the request (client_id, client_secret) or as clientAuth, not both',
        { endpoint: 'POST /oauth/token' },
      );
    }
    const { grant_type, ...parameters } = request;
    const fields: Record<string, FormValue> = { grant_type, ...parameters };
    const headers: Record<string, string> = { 'content-type': FORM };
    if (clientAuth?.method === 'client_secret_basic') {
      headers.authorization = basicAuthorization(clientAuth.clientId, clientAuth.clientSecret);
    } else if (clientAuth?.method === 'client_secret_post') {
      fields.client_id = clientAuth.clientId;
      fields.client_secret = clientAuth.clientSecret;
    } else if (clientAuth?.method === 'none') {
      fields.client_id = clientAuth.clientId;
    }
    const values: Record<string, unknown> = request;
    const secrets = SECRET_FIELDS.map((name) => values[name]).filter(
      (v): v is string => typeof v === 'string',
    );
    if (clientAuth && clientAuth.method !== 'none') secrets.push(clientAuth.clientSecret);
    // the Basic credentials are only base64 of the secret: never echo them either
    if (headers.authorization) secrets.push(headers.authorization.slice('Basic '.length));
    return send(this.#transport, {
      method: 'POST',
      path: 'oauth/token',
      schema: TokenResponse,
      schemaName: 'TokenResponse',
      headers,
      body: formBody(fields),
      secrets: [this.#apiKey, ...secrets],
    });
  }

  async passwordGrant(options: PasswordGrantOptions): Promise<TokenResponse> {
    const auth = clientAuthentication(options.authMethod, options.clientId, options.clientSecret);
    return this.requestToken(
      {
        grant_type: 'password',
        username: options.username,
        password: options.password,
        scope: options.scope,
      },
      auth,
    );
  }

  async clientCredentialsGrant(options: ClientCredentialsGrantOptions): Promise<TokenResponse> {
    const auth = clientAuthentication(options.authMethod, options.clientId, options.clientSecret);
    return this.requestToken(
      { grant_type: 'client_credentials', scope: options.scope, resource: options.resource },
      auth,
    );
  }
}

/** Builds and checks a {@link ClientAuthentication}; the default method depends on whether there is a secret. */
function clientAuthentication(
  method: ClientAuthMethod | undefined,
  clientId: string,
  clientSecret: string | undefined,
): ClientAuthentication {
  const chosen = method ?? (clientSecret === undefined ? 'none' : 'client_secret_basic');
  if (chosen === 'none') {
    if (clientSecret !== undefined) {
      throw new IdgateError(
        'authMethod "none" sends no client secret: drop clientSecret or pick another method',
        {
          endpoint: 'POST /oauth/token',
        },
      );
    }
    return { method: 'none', clientId };
  }
  if (!clientSecret) {
    throw new IdgateError(`authMethod "${chosen}" needs a clientSecret`, { endpoint: 'POST /oauth/token' });
  }
  return { method: chosen, clientId, clientSecret };
}
