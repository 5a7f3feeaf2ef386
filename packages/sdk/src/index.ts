/**
 * `@idgate/sdk`: a typed HTTP client for the idgate identity service, for any JavaScript runtime,
 * and the client side of the OpenID Connect authorization code flow with PKCE.
 * @example
 * import { createIdgateClient, IdgateHttpError } from '@idgate/sdk';
 *
 * const idgate = createIdgateClient({ baseUrl: 'http://localhost:8080', apiKey: 'idg_…' });
 * try {
 *   const tokens = await idgate.passwordGrant({ clientId: 'kubectl', username: 'alice', password: 'pw' });
 *   const review = await idgate.reviewToken(tokens.access_token);
 * } catch (error) {
 *   if (error instanceof IdgateHttpError) console.error(error.status, error.oauthError?.error);
 * }
 * @packageDocumentation
 */

/** Wire types of `@idgate/schema` that the client's methods take and return (each documented there). */
export type {
  CreatedUser,
  CreateUserRequest,
  DeviceAuthorizationResponse,
  Group,
  IdentityProvider,
  IdentityProviderConfigInput,
  IntrospectionResponse,
  Jwks,
  LinkedIdentity,
  LinkIdentityRequest,
  LoginAttempt,
  OAuthError,
  OAuthErrorCode,
  Problem,
  ProblemCode,
  ProviderMetadata,
  TokenRequest,
  TokenResponse,
  TokenReviewApiVersion,
  TokenReviewResponse,
  UpdateUserInput,
  User,
  UserInfo,
  UserStatus,
} from '@idgate/schema';
export {
  computeCodeChallenge,
  createAuthorizationRequest,
  generateCodeVerifier,
  parseAuthorizationResponse,
} from './authorization.js';
export { createIdgateClient } from './client.js';
export type { IdgateClusterMethods } from './clusters.js';
export type { DeviceFlowErrorCode } from './device-flow-error.js';
export { IdgateDeviceFlowError } from './device-flow-error.js';
export type { SchemaIssue } from './errors.js';
export {
  IdgateAuthorizationError,
  IdgateHttpError,
  IdgateRedirectError,
  IdgateSchemaError,
  IdgateSdkError,
} from './errors.js';
export type { IdgateFederationMethods } from './federation-types.js';
export { createNativeClient, discoverIssuer } from './native-client.js';
export type {
  DiscoveryOptions,
  NativeAuthorizationRequestParameters,
  NativeClient,
  NativeClientOptions,
  NativeCodeExchangeOptions,
  NativeRefreshOptions,
  NativeRevokeOptions,
  PollDeviceAuthorizationOptions,
} from './native-types.js';
export type {
  AuthorizationCodeGrantOptions,
  AuthorizationPrompt,
  AuthorizationRequest,
  AuthorizationRequestOptions,
  AuthorizationRequestParameters,
  AuthorizationResponse,
  ClientAuthentication,
  ClientAuthMethod,
  ClientCredentialsGrantOptions,
  ExpectedAuthorizationResponse,
  IdgateClient,
  IdgateClientOptions,
  IntrospectTokenOptions,
  PasswordGrantOptions,
  RefreshTokenGrantOptions,
  ReviewTokenOptions,
  RevokeTokenOptions,
  TokenTypeHint,
} from './types.js';
export type {
  IdgateUserMethods,
  IfMatchOptions,
  Page,
  PageOptions,
  UserListOptions,
} from './users.js';
