import {
  IntrospectionResponse,
  Jwks,
  ProviderMetadata,
  TOKEN_EXCHANGE_GRANT_TYPE,
  type TokenRequest,
  TokenResponse,
  TokenReviewResponse,
  UserInfo,
} from '@idgate/schema';
import { buildAuthorizationRequest } from './authorization.js';
import { finishExternalSignIn } from './callback.js';
import { basicAuthorization, type FormValue, formBody } from './encoding.js';
import { EndpointMethods } from './endpoints.js';
import { IdgateSdkError } from './errors.js';
import { createTransport, type Parser, send, type TransportOptions } from './http.js';
import type {
  AuthorizationCodeGrantOptions,
  AuthorizationRequest,
  AuthorizationRequestParameters,
  ClientAuthentication,
  ClientAuthMethod,
  ClientCredentialsGrantOptions,
  ExternalLoginOptions,
  HealthStatus,
  IdgateClient,
  IdgateClientOptions,
  IntrospectTokenOptions,
  LogoutParameters,
  PasswordGrantOptions,
  ReadinessStatus,
  RefreshTokenGrantOptions,
  ReviewTokenOptions,
  RevokeTokenOptions,
  TokenExchangeOptions,
} from './types.js';
import { issuerOfRoot } from './urls.js';

const FORM = 'application/x-www-form-urlencoded';
/** Request fields that are credentials: redacted from every error message. */
const SECRET_FIELDS = [
  'password',
  'client_secret',
  'refresh_token',
  'code',
  'code_verifier',
  'subject_token',
  'actor_token',
] as const;
/** Accepts any body: RFC 7009 §2.2 gives the revocation response no content to check. */
const ANY_BODY: Parser<void> = { safeParse: () => ({ success: true, data: undefined }) };

/**
 * Creates a client of the idgate server at `baseUrl` for what a relying party, a resource server
 * or a kube-apiserver's webhook calls: token grants, introspection, revocation, userinfo,
 * TokenReview, discovery, JWKS, sign-in URLs and probes. The admin API has a client of its own,
 * {@link createIdgateAdminClient}. Runs in any runtime with `fetch` (browsers, Node 20+, Deno,
 * Bun, workers).
 * @throws {IdgateSdkError} when `baseUrl` is not an absolute http(s) URL, or `timeoutMs`/`retry` is invalid.
 * @example
 * import { createIdgateClient } from '@idgate/sdk';
 *
 * const idgate = createIdgateClient({ baseUrl: 'http://localhost:8080', apiKey: 'idg_…' });
 * const { access_token } = await idgate.clientCredentialsGrant({ clientId: 'ci', clientSecret: 's3cret' });
 * const review = await idgate.reviewToken(access_token);
 * console.log(review.status.authenticated, review.status.user?.username);
 */
export function createIdgateClient(options: IdgateClientOptions): IdgateClient {
  return new Client(createTransport(options), options.apiKey);
}

class Client implements IdgateClient {
  readonly #transport: TransportOptions;
  readonly #apiKey: string | undefined;
  readonly #endpoints: EndpointMethods;

  constructor(transport: TransportOptions, apiKey: string | undefined) {
    this.#transport = transport;
    this.#apiKey = apiKey;
    this.#endpoints = new EndpointMethods(transport);
  }

  logoutUrl(parameters?: LogoutParameters): URL {
    return this.#endpoints.logoutUrl(parameters);
  }

  externalLoginUrl(provider: string, options?: ExternalLoginOptions): URL {
    return this.#endpoints.externalLoginUrl(provider, options);
  }

  health(): Promise<HealthStatus> {
    return this.#endpoints.health();
  }

  readiness(): Promise<ReadinessStatus> {
    return this.#endpoints.readiness();
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
      throw new IdgateSdkError('reviewToken needs an API key: pass { apiKey } to createIdgateClient', {
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
      throw new IdgateSdkError(
        'pass client credentials either in the request (client_id, client_secret) or as clientAuth, not both',
        { endpoint: 'POST /oauth/token' },
      );
    }
    const { grant_type, ...parameters } = request;
    const values: Record<string, unknown> = request;
    const secrets = SECRET_FIELDS.map((name) => values[name]).filter(
      (v): v is string => typeof v === 'string',
    );
    return this.#postForm('oauth/token', { grant_type, ...parameters }, secrets, clientAuth, {
      schema: TokenResponse,
      schemaName: 'TokenResponse',
    });
  }

  /** POSTs a form to `path` with client authentication, redacting `secrets` and the client's credentials. */
  #postForm<T>(
    path: string,
    fields: Record<string, FormValue>,
    secrets: string[],
    clientAuth: ClientAuthentication | undefined,
    response: { schema: Parser<T>; schemaName: string },
  ): Promise<T> {
    const headers: Record<string, string> = { 'content-type': FORM };
    const form: Record<string, FormValue> = { ...fields };
    if (clientAuth?.method === 'client_secret_basic') {
      headers.authorization = basicAuthorization(clientAuth.clientId, clientAuth.clientSecret);
    } else if (clientAuth?.method === 'client_secret_post') {
      form.client_id = clientAuth.clientId;
      form.client_secret = clientAuth.clientSecret;
    } else if (clientAuth?.method === 'none') {
      form.client_id = clientAuth.clientId;
    }
    const redacted = [this.#apiKey, ...secrets];
    if (clientAuth && clientAuth.method !== 'none') redacted.push(clientAuth.clientSecret);
    // the Basic credentials are only base64 of the secret: never echo them either
    if (headers.authorization) redacted.push(headers.authorization.slice('Basic '.length));
    return send(this.#transport, {
      method: 'POST',
      path,
      ...response,
      headers,
      body: formBody(form),
      secrets: redacted,
    });
  }

  async passwordGrant(options: PasswordGrantOptions): Promise<TokenResponse> {
    return this.#grant(options, {
      grant_type: 'password',
      username: options.username,
      password: options.password,
      scope: options.scope,
      provider: options.provider,
      resource: options.resource,
    });
  }

  async clientCredentialsGrant(options: ClientCredentialsGrantOptions): Promise<TokenResponse> {
    return this.#grant(options, {
      grant_type: 'client_credentials',
      scope: options.scope,
      resource: options.resource,
    });
  }

  async tokenExchange(options: TokenExchangeOptions): Promise<TokenResponse> {
    const request: TokenRequest = {
      grant_type: TOKEN_EXCHANGE_GRANT_TYPE,
      subject_token: options.subjectToken,
      subject_token_type: options.subjectTokenType ?? 'urn:ietf:params:oauth:token-type:jwt',
      audience: options.audience,
      ...(options.expiresIn === undefined ? {} : { expires_in: String(options.expiresIn) }),
      ...(options.actorToken === undefined
        ? {}
        : {
            actor_token: options.actorToken,
            actor_token_type: options.actorTokenType ?? 'urn:ietf:params:oauth:token-type:jwt',
          }),
    };
    return this.requestToken(
      request,
      options.clientId === undefined
        ? undefined
        : clientAuthentication(options.authMethod, options.clientId, options.clientSecret),
    );
  }

  async exchangeCode(options: AuthorizationCodeGrantOptions): Promise<TokenResponse> {
    return this.#grant(options, {
      grant_type: 'authorization_code',
      code: options.code,
      redirect_uri: options.redirectUri,
      code_verifier: options.codeVerifier,
    });
  }

  async refreshToken(options: RefreshTokenGrantOptions): Promise<TokenResponse> {
    return this.#grant(options, {
      grant_type: 'refresh_token',
      refresh_token: options.refreshToken,
      scope: options.scope,
    });
  }

  /** Requests a token for one of the grant helpers, authenticating the client its options name. */
  async #grant(
    options: Pick<PasswordGrantOptions, 'clientId' | 'clientSecret' | 'authMethod'>,
    request: TokenRequest,
  ): Promise<TokenResponse> {
    const auth = clientAuthentication(options.authMethod, options.clientId, options.clientSecret);
    return this.requestToken(request, auth);
  }

  async userinfo(accessToken: string): Promise<UserInfo> {
    if (typeof accessToken !== 'string' || accessToken === '') {
      throw new IdgateSdkError('userinfo needs an access token', { endpoint: 'GET /oauth/userinfo' });
    }
    return send(this.#transport, {
      method: 'GET',
      path: 'oauth/userinfo',
      schema: UserInfo,
      schemaName: 'UserInfo',
      headers: { authorization: `Bearer ${accessToken}` },
      bearerChallenge: true,
      secrets: [this.#apiKey, accessToken],
    });
  }

  async revokeToken(options: RevokeTokenOptions): Promise<void> {
    const endpoint = 'POST /oauth/revoke';
    const auth = clientAuthentication(options.authMethod, options.clientId, options.clientSecret, endpoint);
    await this.#postForm(
      'oauth/revoke',
      { token: requiredToken(options.token, endpoint), token_type_hint: options.tokenTypeHint },
      [options.token],
      auth,
      { schema: ANY_BODY, schemaName: 'an RFC 7009 revocation response' },
    );
  }

  async introspectToken(options: IntrospectTokenOptions): Promise<IntrospectionResponse> {
    const endpoint = 'POST /oauth/introspect';
    const auth = clientAuthentication(
      options.authMethod ?? 'client_secret_basic',
      options.clientId,
      options.clientSecret,
      endpoint,
    );
    return this.#postForm(
      'oauth/introspect',
      { token: requiredToken(options.token, endpoint), token_type_hint: options.tokenTypeHint },
      [options.token],
      auth,
      { schema: IntrospectionResponse, schemaName: 'IntrospectionResponse' },
    );
  }

  createAuthorizationRequest(parameters: AuthorizationRequestParameters): Promise<AuthorizationRequest> {
    return buildAuthorizationRequest(issuerOfRoot(this.#transport.root), parameters);
  }

  callback(provider: string, query: Record<string, string> | URLSearchParams): Promise<TokenResponse> {
    return finishExternalSignIn(this.#transport, this.#apiKey, provider, query);
  }
}

/** `token`, checked to be a non-empty string before it is sent. */
function requiredToken(token: string, endpoint: string): string {
  if (typeof token !== 'string' || token === '') {
    throw new IdgateSdkError('token must not be empty', { endpoint });
  }
  return token;
}

/** Builds and checks a {@link ClientAuthentication}; the default method depends on whether there is a secret. */
function clientAuthentication(
  method: ClientAuthMethod | undefined,
  clientId: string,
  clientSecret: string | undefined,
  endpoint = 'POST /oauth/token',
): ClientAuthentication {
  const chosen = method ?? (clientSecret === undefined ? 'none' : 'client_secret_basic');
  if (chosen === 'none') {
    if (clientSecret !== undefined) {
      throw new IdgateSdkError(
        'authMethod "none" sends no client secret: drop clientSecret or pick another method',
        { endpoint },
      );
    }
    return { method: 'none', clientId };
  }
  if (!clientSecret) {
    throw new IdgateSdkError(`authMethod "${chosen}" needs a clientSecret`, { endpoint });
  }
  return { method: chosen, clientId, clientSecret };
}
