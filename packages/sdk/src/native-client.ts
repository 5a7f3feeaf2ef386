import {
  DEVICE_CODE_GRANT_TYPE,
  DeviceAuthorizationResponse,
  ProviderMetadata,
  TokenResponse,
} from '@idgate/schema';
import { acrValuesParameter, buildAuthorizationRequest } from './authorization.js';
import { IdgateDeviceFlowError } from './device-flow-error.js';
import { type FormValue, formBody } from './encoding.js';
import { IdgateHttpError, IdgateSdkError } from './errors.js';
import { type Parser, send, type TransportOptions } from './http.js';
import type {
  DiscoveryOptions,
  NativeAuthorizationRequestParameters,
  NativeClient,
  NativeClientOptions,
  NativeCodeExchangeOptions,
  NativeRefreshOptions,
  NativeRevokeOptions,
  PollDeviceAuthorizationOptions,
} from './native-types.js';
import type { AuthorizationRequest } from './types.js';
import { checkedIssuer } from './urls.js';

const DEFAULT_TIMEOUT_MS = 10_000;
/** RFC 8628 §3.2: the interval a client uses when the server names none. */
const DEFAULT_INTERVAL_S = 5;
/** RFC 8628 §3.5: `slow_down` adds 5 seconds to the interval for this and every later poll. */
const SLOW_DOWN_S = 5;
const ANY_BODY: Parser<void> = { safeParse: () => ({ success: true, data: undefined }) };

/**
 * Fetches the OpenID provider metadata of `issuer` (OIDC Discovery §4:
 * `{issuer}/.well-known/openid-configuration`), validates it as `ProviderMetadata` and checks that
 * its `issuer` is exactly the one asked for (§4.3, mix-up defence). Works with any standards
 * following provider, idgate or not.
 * @throws {IdgateSdkError} when the issuer is unreachable or not an http(s) URL;
 * {@link IdgateHttpError} for a non-2xx answer; {@link IdgateSchemaError} for a document that is
 * not provider metadata or names another issuer.
 * @example
 * import { discoverIssuer } from '@idgate/sdk';
 *
 * const metadata = await discoverIssuer('https://id.example.com/oauth');
 * console.log(metadata.device_authorization_endpoint);
 */
export async function discoverIssuer(
  issuer: string | URL,
  options: DiscoveryOptions = {},
): Promise<ProviderMetadata> {
  const id = checkedIssuer(issuer);
  const transport = transportFor(id, options);
  const metadata = await send(transport, {
    method: 'GET',
    path: `${id}/.well-known/openid-configuration`,
    schema: ProviderMetadata,
    schemaName: 'ProviderMetadata',
    secrets: [],
  });
  if (metadata.issuer !== id && metadata.issuer !== `${id}/`) {
    throw new IdgateSdkError(
      `the discovery document of ${id} names another issuer (${JSON.stringify(metadata.issuer.slice(0, 200))}): refusing it (OIDC Discovery §4.3)`,
      { endpoint: 'GET /.well-known/openid-configuration' },
    );
  }
  return metadata;
}

/**
 * A client of one OAuth 2.0 / OpenID provider for a native application (RFC 8252) such as a
 * command-line tool: a public client (no secret) that signs people in with the device authorization
 * grant (RFC 8628) or the authorization code flow with PKCE on a loopback redirect, asks at
 * sign-in for every resource it will need and then for tokens for one of them at a time
 * (RFC 8707), and revokes them (RFC 7009). Every endpoint comes from the provider's discovery
 * document (see {@link discoverIssuer}).
 * @throws {IdgateSdkError} when `clientId` is empty or `timeoutMs` invalid.
 * @example
 * import { createNativeClient, discoverIssuer } from '@idgate/sdk';
 *
 * const metadata = await discoverIssuer('https://id.example.com/oauth');
 * const client = createNativeClient({ metadata, clientId: 'kubectl' });
 * const device = await client.requestDeviceAuthorization({
 *   scope: 'openid offline_access',
 *   resource: ['kubernetes:prod', 'kubernetes:stage'],
 * });
 * console.error(`Open ${device.verification_uri_complete} and check the code ${device.user_code}`);
 * const tokens = await client.pollDeviceAuthorization(device, { resource: 'kubernetes:prod' });
 * // later, from the same sign-in: a token for the other cluster it approved
 * const forStage = await client.refresh({ refreshToken: tokens.refresh_token!, resource: 'kubernetes:stage' });
 */
export function createNativeClient(options: NativeClientOptions): NativeClient {
  if (typeof options.clientId !== 'string' || options.clientId === '') {
    throw new IdgateSdkError('clientId must not be empty');
  }
  return new Native(options, transportFor(options.metadata.issuer, options));
}

function transportFor(root: string, options: DiscoveryOptions): TransportOptions {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (!Number.isInteger(timeoutMs) || timeoutMs <= 0 || timeoutMs > 2_147_483_647) {
    throw new IdgateSdkError('timeoutMs must be a positive integer number of milliseconds');
  }
  return { root: new URL(root), fetch: options.fetch, timeoutMs, retry: 0, headers: {}, peer: 'the issuer' };
}

class Native implements NativeClient {
  readonly metadata: ProviderMetadata;
  readonly clientId: string;
  readonly #transport: TransportOptions;
  readonly #sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  readonly #now: () => number;

  constructor(options: NativeClientOptions, transport: TransportOptions) {
    this.metadata = options.metadata;
    this.clientId = options.clientId;
    this.#transport = transport;
    this.#sleep = options.sleep ?? abortableSleep;
    this.#now = options.now ?? Date.now;
  }

  async requestDeviceAuthorization(
    parameters: {
      scope?: string | undefined;
      resource?: string | readonly string[] | undefined;
      acrValues?: string | readonly string[] | undefined;
    } = {},
  ): Promise<DeviceAuthorizationResponse> {
    const endpoint = this.metadata.device_authorization_endpoint;
    if (endpoint === undefined) {
      throw new IdgateSdkError(
        `${this.metadata.issuer} offers no device authorization grant (its discovery document has no device_authorization_endpoint)`,
      );
    }
    return this.#post(
      endpoint,
      {
        client_id: this.clientId,
        scope: parameters.scope,
        resource: parameters.resource,
        acr_values: acrValuesParameter(parameters.acrValues),
      },
      [],
      DeviceAuthorizationResponse,
      'DeviceAuthorizationResponse',
    );
  }

  async pollDeviceAuthorization(
    authorization: DeviceAuthorizationResponse,
    options: PollDeviceAuthorizationOptions = {},
  ): Promise<TokenResponse> {
    const started = this.#now();
    const deadline = started + authorization.expires_in * 1000;
    let interval = authorization.interval ?? DEFAULT_INTERVAL_S;
    for (;;) {
      // RFC 8628 §3.5: wait `interval` seconds between requests, the first one included
      await this.#sleep(interval * 1000, options.signal);
      if (this.#now() >= deadline) {
        throw new IdgateDeviceFlowError('the device code expired before the sign-in was approved', {
          error: 'expired_token',
        });
      }
      try {
        return await this.#post(
          this.metadata.token_endpoint,
          {
            grant_type: DEVICE_CODE_GRANT_TYPE,
            device_code: authorization.device_code,
            client_id: this.clientId,
            resource: options.resource,
          },
          [authorization.device_code],
          TokenResponse,
          'TokenResponse',
        );
      } catch (error) {
        const code = error instanceof IdgateHttpError ? error.oauthError?.error : undefined;
        if (code === 'authorization_pending') continue;
        if (code === 'slow_down') {
          interval += SLOW_DOWN_S;
          continue;
        }
        if (code === 'access_denied') {
          throw new IdgateDeviceFlowError('the sign-in was denied', { error: 'access_denied', cause: error });
        }
        if (code === 'expired_token') {
          throw new IdgateDeviceFlowError('the device code expired before the sign-in was approved', {
            error: 'expired_token',
            cause: error,
          });
        }
        throw error;
      }
    }
  }

  async createAuthorizationRequest(
    parameters: NativeAuthorizationRequestParameters,
  ): Promise<AuthorizationRequest> {
    const { resource, ...rest } = parameters;
    const request = await buildAuthorizationRequest(this.metadata.issuer, {
      ...rest,
      clientId: this.clientId,
    });
    // the parameters built for `{issuer}/authorize`, moved to the endpoint discovery names
    const url = new URL(this.metadata.authorization_endpoint);
    for (const [name, value] of request.url.searchParams) url.searchParams.append(name, value);
    for (const value of resource === undefined ? [] : [resource].flat())
      url.searchParams.append('resource', value);
    return { ...request, url };
  }

  exchangeCode(options: NativeCodeExchangeOptions): Promise<TokenResponse> {
    return this.#post(
      this.metadata.token_endpoint,
      {
        grant_type: 'authorization_code',
        code: options.code,
        redirect_uri: options.redirectUri,
        code_verifier: options.codeVerifier,
        client_id: this.clientId,
        resource: options.resource,
      },
      [options.code, options.codeVerifier],
      TokenResponse,
      'TokenResponse',
    );
  }

  refresh(options: NativeRefreshOptions): Promise<TokenResponse> {
    return this.#post(
      this.metadata.token_endpoint,
      {
        grant_type: 'refresh_token',
        refresh_token: options.refreshToken,
        client_id: this.clientId,
        scope: options.scope,
        resource: options.resource,
      },
      [options.refreshToken],
      TokenResponse,
      'TokenResponse',
    );
  }

  async revoke(options: NativeRevokeOptions): Promise<void> {
    const endpoint = this.metadata.revocation_endpoint;
    if (endpoint === undefined) {
      throw new IdgateSdkError(
        `${this.metadata.issuer} offers no token revocation (its discovery document has no revocation_endpoint)`,
      );
    }
    await this.#post(
      endpoint,
      { token: options.token, token_type_hint: options.tokenTypeHint, client_id: this.clientId },
      [options.token],
      ANY_BODY,
      'an RFC 7009 revocation response',
    );
  }

  #post<T>(
    url: string,
    fields: Record<string, FormValue>,
    secrets: ReadonlyArray<string | undefined>,
    schema: Parser<T>,
    schemaName: string,
  ): Promise<T> {
    return send(this.#transport, {
      method: 'POST',
      path: url,
      schema,
      schemaName,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: formBody(fields),
      secrets,
    });
  }
}

/** Resolves after `ms`, or rejects with the signal's reason once it aborts. */
function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
