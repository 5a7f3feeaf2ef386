import type { DeviceAuthorizationResponse, ProviderMetadata, TokenResponse } from '@idgate/schema';
import type { AuthorizationRequest, AuthorizationRequestParameters, TokenTypeHint } from './types.js';

/**
 * Options of {@link discoverIssuer}.
 * @example const options: DiscoveryOptions = { timeoutMs: 5_000 };
 */
export interface DiscoveryOptions {
  /** The `fetch` to use. Defaults to the global `fetch`. */
  fetch?: typeof fetch | undefined;
  /** Per-request timeout in milliseconds. Default `10_000`. */
  timeoutMs?: number | undefined;
}

/**
 * Options of {@link createNativeClient}.
 * @example
 * const options: NativeClientOptions = { metadata: await discoverIssuer(issuer), clientId: 'kubectl' };
 */
export interface NativeClientOptions extends DiscoveryOptions {
  /** The provider's discovery document: every endpoint the client calls comes from it. */
  metadata: ProviderMetadata;
  /** The public client's `client_id` (RFC 8252 §8.4: native apps have no secret). */
  clientId: string;
  /**
   * Waits between device-code polls; rejects when `signal` aborts. Defaults to a timer; tests pass
   * one that advances a fake clock instead of waiting.
   */
  sleep?: ((ms: number, signal?: AbortSignal) => Promise<void>) | undefined;
  /** The current time in milliseconds since the epoch (default `Date.now`), for the device code's expiry. */
  now?: (() => number) | undefined;
}

/**
 * Options of {@link NativeClient.pollDeviceAuthorization}.
 * @example const options: PollDeviceAuthorizationOptions = { resource: 'kubernetes:prod', signal: AbortSignal.timeout(600_000) };
 */
export interface PollDeviceAuthorizationOptions {
  /** RFC 8707 resource indicator: the audience of the access token. */
  resource?: string | undefined;
  /** Stops polling (the promise rejects with the signal's reason). */
  signal?: AbortSignal | undefined;
}

/**
 * Parameters of {@link NativeClient.createAuthorizationRequest}: those of an authorization request
 * without the client id (the client's own), plus RFC 8707 `resource`s.
 * @example
 * const parameters: NativeAuthorizationRequestParameters = {
 *   redirectUri: 'http://127.0.0.1:49152/callback', scope: 'openid offline_access',
 *   resource: ['kubernetes:prod', 'kubernetes:stage'],
 * };
 */
export interface NativeAuthorizationRequestParameters
  extends Omit<AuthorizationRequestParameters, 'clientId'> {
  /**
   * RFC 8707 resource indicator(s), one `resource` parameter each: every audience the sign-in's
   * grant is to cover. A provider that records them (idgate does) lets the grant's token requests
   * ask only for these.
   */
  resource?: string | readonly string[] | undefined;
}

/**
 * Options of {@link NativeClient.exchangeCode}.
 * @example const options: NativeCodeExchangeOptions = { code, redirectUri, codeVerifier: request.codeVerifier, resource: 'kubernetes:prod' };
 */
export interface NativeCodeExchangeOptions {
  code: string;
  /** The `redirect_uri` of the authorization request, exactly as sent (its port included). */
  redirectUri: string;
  /** The PKCE `code_verifier` of the authorization request. */
  codeVerifier: string;
  /** RFC 8707 resource indicator: the audience of the access token. */
  resource?: string | undefined;
}

/**
 * Options of {@link NativeClient.refresh}.
 * @example const options: NativeRefreshOptions = { refreshToken: tokens.refresh_token, resource: 'kubernetes:staging' };
 */
export interface NativeRefreshOptions {
  refreshToken: string;
  /**
   * RFC 8707: an access token for this audience from the same grant (another cluster the sign-in
   * asked for, say); a provider refuses one the sign-in did not cover (`invalid_target`).
   */
  resource?: string | undefined;
  /** A scope no wider than the one granted; the granted one when omitted. */
  scope?: string | undefined;
}

/**
 * Options of {@link NativeClient.revoke}.
 * @example const options: NativeRevokeOptions = { token: tokens.refresh_token, tokenTypeHint: 'refresh_token' };
 */
export interface NativeRevokeOptions {
  token: string;
  tokenTypeHint?: TokenTypeHint | undefined;
}

/**
 * A public native-app client of one provider (see {@link createNativeClient}).
 * @example
 * const tokens = await client.refresh({ refreshToken, resource: 'kubernetes:prod' });
 */
export interface NativeClient {
  /** The discovery document the client was made with. */
  readonly metadata: ProviderMetadata;
  /** The client id it signs in as. */
  readonly clientId: string;
  /**
   * Starts a device authorization grant (RFC 8628 §3.1) at `device_authorization_endpoint`.
   * @throws {IdgateSdkError} when the provider advertises no device authorization endpoint.
   */
  requestDeviceAuthorization(parameters?: {
    scope?: string | undefined;
    /**
     * RFC 8707 resource indicator(s), one `resource` parameter each: every audience the sign-in's
     * grant is to cover, as the verification page names them.
     */
    resource?: string | readonly string[] | undefined;
    /**
     * `acr_values` (sent space-separated) for the approval, e.g. `urn:idgate:acr:mfa`. idgate asks
     * for a second factor on its verification page when a resource is a cluster that requires one.
     */
    acrValues?: string | readonly string[] | undefined;
  }): Promise<DeviceAuthorizationResponse>;
  /**
   * Polls the token endpoint with the device code (RFC 8628 §3.4, §3.5) until the person approves:
   * waits `interval` seconds (5 when absent) before each request, keeps polling on
   * `authorization_pending`, adds 5 seconds to the interval on `slow_down`.
   * @throws {IdgateDeviceFlowError} on `access_denied`, or `expired_token` (answered, or the
   * device code's `expires_in` passed).
   * @throws {IdgateHttpError} for any other error answer.
   */
  pollDeviceAuthorization(
    authorization: DeviceAuthorizationResponse,
    options?: PollDeviceAuthorizationOptions,
  ): Promise<TokenResponse>;
  /**
   * An authorization code request with PKCE S256, state and nonce at the discovered
   * `authorization_endpoint` (RFC 8252 §6), with RFC 8707 `resource`s when given.
   */
  createAuthorizationRequest(parameters: NativeAuthorizationRequestParameters): Promise<AuthorizationRequest>;
  /** The authorization code grant (RFC 6749 §4.1.3) with the PKCE verifier and an RFC 8707 `resource`. */
  exchangeCode(options: NativeCodeExchangeOptions): Promise<TokenResponse>;
  /** The refresh token grant (RFC 6749 §6) with an RFC 8707 `resource`. */
  refresh(options: NativeRefreshOptions): Promise<TokenResponse>;
  /**
   * Revokes a token at `revocation_endpoint` (RFC 7009).
   * @throws {IdgateSdkError} when the provider advertises no revocation endpoint.
   */
  revoke(options: NativeRevokeOptions): Promise<void>;
}
