/**
 * `@idgate/sdk`: a typed HTTP client for the idgate identity service, for any JavaScript runtime,
 * and the client side of the OpenID Connect authorization code flow with PKCE.
 * @example
 * import { createIdgateAdminClient, createIdgateClient, IdgateHttpError } from '@idgate/sdk';
 *
 * const idgate = createIdgateClient({ baseUrl: 'http://localhost:8080', apiKey: 'idg_…' });
 * try {
 *   const tokens = await idgate.passwordGrant({ clientId: 'kubectl', username: 'alice', password: 'pw' });
 *   const review = await idgate.reviewToken(tokens.access_token);
 * } catch (error) {
 *   if (error instanceof IdgateHttpError) console.error(error.status, error.oauthError?.error);
 * }
 * const admin = createIdgateAdminClient({ baseUrl: 'http://localhost:8080', apiKey: 'idg_…' });
 * const { items } = await admin.listUsers({ group: 'dev' });
 * @packageDocumentation
 */

/** Wire types of `@idgate/schema` that the clients' methods take and return (each documented there). */
export type {
  ApiKey,
  CreateApiKeyInput,
  CreatedApiKey,
  CreatedClient,
  CreatedUser,
  CreateUserRequest,
  DeviceAuthorizationResponse,
  EndedSessions,
  FactorsReset,
  GrantInfo,
  Group,
  IdentityProvider,
  IdentityProviderConfigInput,
  IdentityProviderPatch,
  IntrospectionResponse,
  Jwks,
  LinkedIdentity,
  LinkIdentityRequest,
  LoginAttempt,
  OAuthClient,
  OAuthError,
  OAuthErrorCode,
  Problem,
  ProblemCode,
  ProviderMetadata,
  RegisterClientRequest,
  RevokedGrants,
  RotateClientSecretRequest,
  RotatedClientSecret,
  SessionInfo,
  SigningKeyInfo,
  SigningKeyRotation,
  TokenRequest,
  TokenResponse,
  TokenReviewApiVersion,
  TokenReviewResponse,
  UpdateClientInput,
  UpdateUserInput,
  User,
  UserFactor,
  UserFactors,
  UserInfo,
  UserStatus,
} from '@idgate/schema';
export type { IdgateAdminClient, IdgateAdminClientOptions } from './admin-client.js';
export { createIdgateAdminClient } from './admin-client.js';
export type { Page, PageOptions } from './admin-http.js';
export {
  computeCodeChallenge,
  createAuthorizationRequest,
  generateCodeVerifier,
  parseAuthorizationResponse,
} from './authorization.js';
export { createIdgateClient } from './client.js';
export type { IdgateClusterMethods } from './clusters.js';
export type { IdgateClientAdminMethods } from './credentials.js';
export type { ApplyDeclarationsOptions, IdgateDeclarationMethods } from './declarations.js';
export type { DeviceFlowErrorCode } from './device-flow-error.js';
export { IdgateDeviceFlowError } from './device-flow-error.js';
export { externalLoginUrl, logoutUrl } from './endpoints.js';
export type { SchemaIssue } from './errors.js';
export {
  IdgateAuthorizationError,
  IdgateHttpError,
  IdgateRedirectError,
  IdgateSchemaError,
  IdgateSdkError,
} from './errors.js';
export type {
  AuditEventListOptions,
  FollowEventsOptions,
  IdgateAuditMethods,
  ReconnectOptions,
} from './events.js';
export type { IdgateFederationMethods, UpdateIdentityProviderOptions } from './federation-types.js';
export type { IdgateIncidentMethods } from './incident.js';
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
export type { IdgateSessionMethods } from './sessions.js';
export type { IdgateTrustMethods } from './trusts.js';
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
  TokenTypeHint,
} from './types.js';
export type {
  IdgateUserMethods,
  IfMatchOptions,
  UserListOptions,
} from './users.js';
