export {
  AdminApiScope,
  API_KEY_ROLES,
  ApiKey,
  ApiKeyRole,
  ApiKeyScope,
  CreateApiKeyInput,
  CreatedApiKey,
  UpdateApiKeyInput,
} from './admin/api-keys.js';
export {
  CreatedClient,
  DEVICE_CODE_GRANT_TYPE,
  GrantType,
  MAX_SECRET_GRACE_PERIOD,
  OAuthClient,
  RedirectUri,
  RegisterClientInput,
  type RegisterClientRequest,
  RotateClientSecretInput,
  type RotateClientSecretRequest,
  RotatedClientSecret,
  ScopeToken,
  UpdateClientInput,
} from './admin/clients.js';
export {
  ApplyDeclarationsInput,
  ApplyResult,
  DECLARED_SECRET_FIELDS,
  DeclarationManager,
  Declarations,
  DeclaredApiKey,
  DeclaredClient,
  DeclaredCluster,
  DeclaredGroup,
  DeclaredIdentityProvider,
  DeclaredKind,
  DeclaredTrust,
  DeclaredUser,
  PlannedChange,
  PlannedField,
  SecretReference,
} from './admin/declarations.js';
export { FactorsReset, MfaRequirement, UserFactor, UserFactors } from './admin/factors.js';
export { CreateGroupInput, Group, GroupName, UpdateGroupInput } from './admin/groups.js';
export {
  BlockedAddress,
  ClientGrantInfo,
  ClientSessionInfo,
  LiftedBlocks,
  NotBefore,
  NotBeforeScope,
  RetireSigningKeyInput,
  SetNotBeforeInput,
  SigningKeyRetirement,
  SourceAddress,
} from './admin/incident.js';
export { InitResult } from './admin/init.js';
export { PageQuery, pageOf } from './admin/page.js';
export {
  EndedSessions,
  GrantId,
  GrantInfo,
  RevokedGrants,
  SessionId,
  SessionInfo,
} from './admin/sessions.js';
export { SigningAlgorithm, SigningKeyInfo, SigningKeyRotation } from './admin/signing-keys.js';
export {
  CreatedUser,
  CreateUserInput,
  CreateUserRequest,
  IdentitySubject,
  LinkIdentityInput,
  LinkIdentityRequest,
  LoginAttempt,
  LoginAttemptQuery,
  Password,
  SetPasswordInput,
  UpdateUserInput,
  User,
  UserGroups,
  UserListQuery,
  Username,
  UserStatus,
} from './admin/users.js';
export {
  AUDIT_EVENT_SCHEMAS,
  AUDIT_EVENT_TYPES,
  AuditActor,
  AuditEvent,
  type AuditEventOf,
  AuditEventPage,
  AuditEventQuery,
  AuditEventType,
  AuditOutcome,
} from './audit.js';
export {
  AuditChainBreak,
  AuditChainBreakKind,
  AuditChainHead,
  AuditChainVerification,
  AuditChainVerifyRequest,
  AuditChainWriter,
} from './audit-chain.js';
export { AuthorizationRequestForm } from './authorization.js';
export { CallbackCodeQuery, CallbackErrorQuery, CallbackQuery, CallbackTokenQuery } from './callback.js';
export { AccessTokenClaims, IntrospectionResponse, UserInfo } from './claims.js';
export {
  Cluster,
  ClusterAudience,
  ClusterName,
  CreateClusterInput,
  CreatedCluster,
  defaultClusterAudience,
  UpdateClusterInput,
} from './cluster.js';
export { DeviceAuthorizationRequest, DeviceAuthorizationResponse } from './device.js';
export { ProviderMetadata } from './discovery.js';
export { durationSeconds } from './duration.js';
export {
  EXEC_CREDENTIAL_API_VERSIONS,
  ExecCredential,
  ExecCredentialApiVersion,
  ExecCredentialRequest,
} from './exec-credential.js';
export {
  type FormField,
  type FormFieldProblem,
  FormReader,
  type FormReaderOptions,
  type FormValues,
} from './forms.js';
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
export { LIMITS, storedUserAgent } from './limits.js';
export { LogoutRequestForm } from './logout.js';
export { OAuthError, OAuthErrorCode, Problem, ProblemCode } from './oauth-error.js';
export { PkceValue } from './pkce.js';
export {
  AuthorizationCodeGrantRequest,
  ClientCredentialsGrantRequest,
  DeviceCodeGrantRequest,
  PasswordGrantRequest,
  RefreshTokenGrantRequest,
  TokenExchangeGrantRequest,
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
  CreateTrustInput,
  InlineJwks,
  ISSUED_TOKEN_TYPE,
  MAX_TRUST_TTL,
  SUBJECT_TOKEN_TYPES,
  TOKEN_EXCHANGE_GRANT_TYPE,
  Trust,
  TrustEvaluation,
  TrustIssuer,
  TrustName,
  TrustTestInput,
  UpdateTrustInput,
  UsernameTemplate,
} from './trust.js';
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
