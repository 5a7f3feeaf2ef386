export {
  createApiKey,
  createApiKeyFromInput,
  listApiKeyPage,
  listApiKeys,
  revokeApiKey,
} from './admin/api-keys.js';
export {
  type AuditEventFilter,
  auditEventFilter,
  listAuditEvents,
  parseAuditEventQuery,
} from './admin/audit-events.js';
export {
  type ClientSettings,
  checkClientSettings,
  createClient,
  DEFAULT_CLIENT_SCOPES,
  defaultClientScopes,
  getClient,
  listClientPage,
  listClients,
  parseClientRegistration,
  registerClient,
  removeClient,
  rotateClientSecret,
  updateClient,
} from './admin/clients.js';
export { addCluster, getCluster, issueClusterApiKey, listClusters, removeCluster } from './admin/clusters.js';
export {
  AdminError,
  type AdminErrorCode,
  type AdminObject,
  type InputSchema,
  isAdminError,
  parseAdminInput,
} from './admin/errors.js';
export { checkIfMatch, etagOf } from './admin/etag.js';
// Users and groups over the admin API.
export {
  addGroupMember,
  listGroupMembers,
  listGroups,
  removeGroupMember,
} from './admin/groups.js';
export { linkIdentity, listUserIdentities, unlinkIdentity } from './admin/identities.js';
export {
  addIdentityProvider,
  getIdentityProvider,
  listIdentityProviders,
  removeIdentityProvider,
  setIdentityProviderDisabled,
  updateIdentityProvider,
} from './admin/identity-providers.js';
export { ADMIN_GROUP, type Initialized, initializeStorage } from './admin/init.js';
export {
  findKubectlClient,
  KUBECTL_CLIENT_NAME,
  KUBECTL_GRANT_TYPES,
  KUBECTL_REDIRECT_URIS,
  KUBECTL_SCOPES,
} from './admin/kubectl-client.js';
export { decodeCursor, encodeCursor, pageFrom } from './admin/page.js';
export type { AdminPorts, ClientLifetimes } from './admin/ports.js';
export {
  describeIdentityProvider,
  describeStoredProvider,
  type IdentityProviderSource,
  openProviderConfig,
  resealProviderConfig,
  SECRET_PLACEHOLDER,
  sealProviderConfig,
} from './admin/provider-config.js';
export {
  type AdminPage,
  endAllUserSessions,
  endUserSession,
  listUserGrants,
  listUserSessions,
  revokeAllUserGrants,
  revokeUserGrant,
} from './admin/sessions.js';
export { listSigningKeys, rotateSigningKeys } from './admin/signing-keys.js';
export {
  createUser,
  type DisabledUserAccess,
  deleteUser,
  getUser,
  LOGIN_ATTEMPTS_LIMIT,
  listLoginAttempts,
  listUserPage,
  listUsers,
  setUserDisabled,
  setUserPassword,
  unlockUser,
  updateUser,
} from './admin/users.js';
export {
  apiKeyView,
  clientView,
  clusterView,
  grantInfoView,
  linkedIdentityView,
  loginAttemptView,
  sessionInfoView,
  signingKeyView,
  userView,
} from './admin/views.js';
export {
  ApiKeyError,
  type ApiKeyFailure,
  apiKeyFromAuthorization,
  authenticateApiKey,
  type GeneratedApiKey,
  generateApiKey,
  isApiKeyLive,
} from './api-keys/api-key.js';
export {
  type AuditBatcher,
  type AuditBatchStorage,
  createAuditBatcher,
} from './audit/batcher.js';
export { auditEventTime, type FollowOptions, followAuditEvents } from './audit/follow.js';
export {
  type AuditEventDraft,
  type AuditEventIds,
  completeAuditEvents,
  createAuditEventIds,
  type RequestOrigin,
  recordAuditEvent,
} from './audit/record.js';
export {
  type TokenReviewAuditMode,
  type TokenReviewDecision,
  type TokenReviewEvent,
  TokenReviewTally,
  type TokenReviewTallyOptions,
} from './audit/token-review-tally.js';
export { giveConsent } from './authorize/consent.js';
export {
  AUTHORIZATION_CODE_TTL_SECONDS,
  type Authentication,
  type AuthorizationStep,
  authorizationErrorUrl,
  authorizationResponseUrl,
  issueAuthorizationCode,
  nextAuthorizationStep,
} from './authorize/flow.js';
export {
  type DeviceApprovalRequest,
  type InteractionRequest,
  isDeviceApproval,
  isStandalone,
  type StandaloneSignIn,
} from './authorize/interaction.js';
export { computeCodeChallenge, isPkceValue, verifyCodeVerifier } from './authorize/pkce.js';
export {
  AuthorizationError,
  type AuthorizationRequest,
  type AuthorizationRequestOptions,
  matchesLoopbackRedirect,
  type Prompt,
  validateAuthorizationRequest,
} from './authorize/request.js';
export {
  authenticateClient,
  type ClientAuthMethod,
  type PresentedClientCredentials,
} from './clients/authenticate.js';
export {
  type AuthenticationConfiguration,
  type CelRule,
  clusterAuthenticationConfiguration,
  KUBERNETES_JWT_ALGORITHMS,
  type WebhookKubeconfig,
  webhookKubeconfig,
} from './clusters/kubernetes.js';
export { createGitHubConnector, type GitHubConnectorOptions } from './connectors/github.js';
export { createGitLabConnector, type GitLabConnectorOptions } from './connectors/gitlab.js';
export { createOidcConnector } from './connectors/oidc.js';
export {
  type Connector,
  ConnectorError,
  type ConnectorFailure,
  type ExternalIdentity,
  type PasswordConnector,
  type RedirectConnector,
  type RefreshConnector,
  recheckOutcome,
  type UpstreamRecheck,
} from './connectors/types.js';
export type { UpstreamOptions } from './connectors/upstream.js';
export {
  approveDeviceAuthorization,
  type DeviceApprovalContext,
  type DeviceApprover,
  type DeviceAuthorizationUnavailable,
  type DeviceDecisionOutcome,
  denyDeviceAuthorization,
  enterUserCode,
  findPendingDeviceAuthorization,
  type PendingDeviceAuthorization,
} from './device/approval.js';
export {
  DEFAULT_DEVICE_CODE_TTL_SECONDS,
  DEFAULT_DEVICE_POLL_INTERVAL_SECONDS,
  type DeviceAuthorizationContext,
  startDeviceAuthorization,
} from './device/authorization.js';
export {
  formatUserCode,
  generateUserCode,
  normalizeUserCode,
  USER_CODE_ALPHABET,
  USER_CODE_LENGTH,
} from './device/user-code.js';
export {
  buildProviderMetadata,
  type DiscoveryOptions,
  SUPPORTED_CLAIMS,
  SUPPORTED_SCOPES,
} from './discovery.js';
export { type AnyIdgateError, isIdgateError } from './error-family.js';
export {
  IdgateError,
  type IdgateErrorKind,
  type IdgateErrorOptions,
  OAuthProtocolError,
} from './errors.js';
export { authorizationCodeGrant } from './grants/authorization-code.js';
export { clientCredentialsGrant } from './grants/client-credentials.js';
export type {
  ExternalPasswordCheck,
  GrantLifetimes,
  GrantStorage,
  TokenEndpointContext,
} from './grants/context.js';
export { deviceCodeGrant, SLOW_DOWN_INCREMENT_SECONDS } from './grants/device-code.js';
export { issueFederatedTokens } from './grants/federation.js';
export { type FormFields, parseTokenRequest } from './grants/parse.js';
export { passwordGrant } from './grants/password.js';
export { refreshSuccessorKey, refreshTokenGrant } from './grants/refresh-token.js';
export { type GrantRevocationContext, publishGrantRevocations, revokeGrant } from './grants/revoke-grant.js';
export { handleTokenRequest, TOKEN_ENDPOINT_GRANT_TYPES } from './grants/token-endpoint.js';
export {
  grantUpstream,
  revalidateUpstream,
  sealUpstreamState,
  type UpstreamRevalidation,
  type UpstreamRevalidationContext,
} from './grants/upstream-revalidation.js';
export {
  grantsRefreshToken,
  issueUserTokens,
  openGrant,
  type UserTokenRequest,
} from './grants/user-tokens.js';
export { createIdgate } from './instance/idgate.js';
export type { IdgatePolicy, IdgatePorts, ReadCache, TokenPolicy } from './instance/ports.js';
export type { ExternalSignIn, Idgate } from './instance/surface.js';
export {
  type JwsCrypto,
  type JwsSignFunction,
  type JwsVerifyFunction,
  webCryptoJws,
} from './keys/jws-crypto.js';
export { type ActiveSigningKey, KeyRing, type VerificationKey } from './keys/key-ring.js';
export { ensureSigningKey, rotateSigningKey, type SigningKeyPolicy } from './keys/rotation.js';
export { openPrivateKey, openText, sealPrivateKey, sealText } from './keys/seal.js';
export {
  activeSigningKey,
  generateSigningKey,
  SIGNING_ALGORITHMS,
  type SigningKeyPhase,
  type SigningKeyState,
  signingKeyPhases,
  signingKeyState,
} from './keys/signing-key.js';
export { type PurgedRecords, purgeAuditEvents, purgeExpiredRecords } from './maintenance/purge.js';
export type {
  ApiKeyCluster,
  ApiKeyRecord,
  AuthorizationCodeRecord,
  BrowserSessionRecord,
  ClientRecord,
  ClusterRecord,
  CodeChallengeMethod,
  ConsentRecord,
  DeviceAuthorizationRecord,
  DeviceAuthorizationStatus,
  GrantRecord,
  GrantUpstream,
  IdentityProviderRecord,
  InteractionRecord,
  LinkedIdentityRecord,
  LoginAttemptRecord,
  LoginTransactionRecord,
  NewUser,
  RefreshTokenRecord,
  RevocationKind,
  RevocationRecord,
  SigningKeyRecord,
  UserPatch,
  UserRecord,
} from './model.js';
export { checkAccessToken, type LiveAccessToken, type LiveTokenContext } from './oidc/access-token-check.js';
export { type IntrospectionContext, introspectToken } from './oidc/introspection.js';
export { type LogoutRequest, validateLogoutRequest } from './oidc/logout.js';
export { type RevocationContext, revokeToken } from './oidc/revocation.js';
export { userinfo } from './oidc/userinfo.js';
export type { AuditEventListQuery, AuditEventRepository } from './ports/audit-storage.js';
export type { Caller, RequestLog } from './ports/caller.js';
export type {
  IdentityProviderRepository,
  LinkedIdentityRepository,
  LoginTransactionRepository,
  LoginTransactionUse,
} from './ports/federation-storage.js';
export type {
  AuthorizationCodeRepository,
  BrowserSessionRepository,
  CodeRedemption,
  ConsentRepository,
  DeviceAuthorizationRepository,
  DeviceDecision,
  DevicePoll,
  GrantRepository,
  InteractionRepository,
  LoginAttemptRepository,
  PageRequest,
  RefreshTokenRepository,
  RefreshTokenUse,
  SessionActivity,
} from './ports/oidc-storage.js';
export {
  type Clock,
  type PasswordHasher,
  pooledRandom,
  type Random,
  systemClock,
  webCryptoRandom,
} from './ports/runtime.js';
export type { GroupSummary, UserPageQuery, UserStatus } from './ports/storage.js';
export {
  type ApiKeyRepository,
  type ClientRepository,
  type ClusterRepository,
  type RevocationRepository,
  type SigningKeyRepository,
  type Storage,
  StorageConflictError,
  type StorageUnavailability,
  StorageUnavailableError,
  type UserRepository,
} from './ports/storage.js';
export { grantedScope, parseScope, tokenAudience, USER_SCOPES } from './scopes.js';
export {
  constantTimeEqual,
  generateClientId,
  generatePassword,
  generateSecret,
  hashSecret,
  verifySecret,
} from './secrets.js';
export {
  DEFAULT_LOGIN_THROTTLE,
  type LoginAttempt,
  LoginThrottle,
  type LoginThrottlePolicy,
  type ThrottleDecision,
} from './security/login-throttle.js';
export { type EndSessionContext, endBrowserSession, type LogoutRevocation } from './sessions/end-session.js';
export {
  type IdentityMapping,
  type IdentityMappingContext,
  type IdentityMappingPolicy,
  mapExternalIdentity,
  normalizeUsername,
  providerGroups,
  recordUpstreamRefusal,
  signInWithExternalIdentity,
} from './sign-in/external.js';
export {
  type PasswordSignIn,
  type PasswordSignInContext,
  type PasswordSignInFailure,
  type PasswordSignInRequest,
  signInWithPassword,
} from './sign-in/password.js';
export { type IdentityProvider, type IdentityProviders, mappingPolicy } from './sign-in/providers.js';
export {
  reviewToken,
  SERVICE_IDENTITY,
  TOKEN_REVIEW_DENIAL_MESSAGES,
  TOKEN_REVIEW_EXTRA,
  type TokenReviewContext,
  type TokenReviewDenial,
  type TokenReviewer,
} from './token-review/review.js';
export {
  ACCESS_TOKEN_REJECTION_MESSAGES,
  type AccessTokenInput,
  type AccessTokenRejection,
  type AccessTokenVerification,
  type IssuedAccessToken,
  issueAccessToken,
  type LiveTokenRejection,
  MAX_ACCESS_TOKEN_LENGTH,
  verifyAccessToken,
} from './tokens/access-token.js';
export { accessTokenHash, type IdTokenInput, issueIdToken } from './tokens/id-token.js';
export {
  type JwsHeader,
  type JwsRejection,
  type JwsVerification,
  signCompactJws,
  verifyCompactJws,
} from './tokens/jws.js';
export { clusterClaims, userClaims } from './tokens/user-claims.js';
export {
  type PasswordLoginContext,
  type PasswordLoginFailure,
  verifyUserPassword,
} from './users/authenticate.js';
export { COMMON_PASSWORDS } from './users/common-passwords.js';
export {
  checkPasswordPolicy,
  DEFAULT_PASSWORD_POLICY,
  MAX_PASSWORD_LENGTH,
  type PasswordPolicy,
  passwordWeakness,
} from './users/password-policy.js';
