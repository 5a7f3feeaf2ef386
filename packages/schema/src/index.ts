// Users and groups over the admin API.
export {
  ApiKey,
  ApiKeyScope,
  CreateApiKeyInput,
  CreatedUser,
  CreateUserInput,
  CreateUserRequest,
  DEVICE_CODE_GRANT_TYPE,
  EndedSessions,
  GrantId,
  GrantInfo,
  GrantType,
  Group,
  GroupName,
  IdentitySubject,
  InitResult,
  LinkIdentityInput,
  LinkIdentityRequest,
  LoginAttempt,
  LoginAttemptQuery,
  OAuthClient,
  PageQuery,
  Password,
  pageOf,
  RedirectUri,
  RegisterClientInput,
  RevokedGrants,
  ScopeToken,
  SessionId,
  SessionInfo,
  SetPasswordInput,
  SigningAlgorithm,
  SigningKeyInfo,
  UpdateUserInput,
  User,
  UserListQuery,
  Username,
  UserStatus,
} from './admin.js';
export {
  CreatedApiKey,
  CreatedClient,
  MAX_SECRET_GRACE_PERIOD,
  type RegisterClientRequest,
  RotateClientSecretInput,
  type RotateClientSecretRequest,
  RotatedClientSecret,
  SigningKeyRotation,
  UpdateClientInput,
} from './admin-clients.js';
export { CallbackCodeQuery, CallbackErrorQuery, CallbackQuery, CallbackTokenQuery } from './callback.js';
export { AccessTokenClaims, IntrospectionResponse, UserInfo } from './claims.js';
export {
  Cluster,
  ClusterAudience,
  ClusterName,
  CreateClusterInput,
  CreatedCluster,
  defaultClusterAudience,
} from './cluster.js';
export { DeviceAuthorizationRequest, DeviceAuthorizationResponse } from './device.js';
export { ProviderMetadata } from './discovery.js';
export {
  EXEC_CREDENTIAL_API_VERSIONS,
  ExecCredential,
  ExecCredentialApiVersion,
  ExecCredentialRequest,
} from './exec-credential.js';
export {
  DEFAULT_OIDC_SCOPES,
  GitHubProviderConfig,
  GitLabProviderConfig,
  IDENTITY_PROVIDER_SECRETS,
  IdentityProvider,
  IdentityProviderConfig,
  type IdentityProviderConfigInput,
  IdentityProviderName,
  IdentityProviderPatch,
  LdapProviderConfig,
  LinkedIdentity,
  MappingMethod,
  OidcClaimNames,
  OidcProviderConfig,
} from './identity-provider.js';
export { type DescribeIssueOptions, describeFirstIssue } from './issues.js';
export { Jwks, PublicJwk } from './jwks.js';
export { OAuthError, OAuthErrorCode, Problem, ProblemCode } from './oauth-error.js';
export {
  AuthorizationCodeGrantRequest,
  ClientCredentialsGrantRequest,
  DeviceCodeGrantRequest,
  PasswordGrantRequest,
  RefreshTokenGrantRequest,
  TokenRequest,
  TokenResponse,
} from './token.js';
export {
  TOKEN_REVIEW_API_VERSIONS,
  TokenReviewApiVersion,
  TokenReviewRequest,
  TokenReviewResponse,
  TokenReviewSpec,
  TokenReviewStatus,
  TokenReviewUser,
} from './token-review.js';
export {
  GitHubEmails,
  GitHubOrganizations,
  GitHubTeams,
  GitHubUser,
  GitLabUser,
  GitLabUserinfo,
  type UpstreamSchema,
  UpstreamTokenResponse,
} from './upstream.js';
