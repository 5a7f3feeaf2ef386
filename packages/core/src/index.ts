/**
 * `@idgate/core`: what a host needs to run idgate's logic — the instance (`createIdgate`), its
 * ports, the errors it throws, the records storage holds, signing keys and compact JWS, the audit
 * trail's writers and connectors to upstream identity providers. The administrative use cases are
 * in `@idgate/core/admin`; in-memory ports for tests in `@idgate/core/testing`.
 */
export {
  ApiKeyError,
  type ApiKeyFailure,
  apiKeyFromAuthorization,
  authenticateApiKey,
  type GeneratedApiKey,
  generateApiKey,
} from './api-keys/api-key.js';
export { apiKeyScopes, holdsScope } from './api-keys/scopes.js';
export type { AuditBatcher, AuditBatchStorage } from './audit/batcher.js';
export {
  type AuditEventDraft,
  type AuditEventIds,
  completeAuditEvents,
  createAuditEventIds,
  originFields,
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
export type { ConsentGiven } from './authorize/consent.js';
export {
  type Authentication,
  type AuthorizationStep,
  authorizationErrorUrl,
  authorizationResponseUrl,
} from './authorize/flow.js';
export {
  type DeviceApprovalRequest,
  type InteractionRecord,
  type InteractionRequest,
  isDeviceApproval,
  isStandalone,
  type StandaloneSignIn,
} from './authorize/interaction.js';
export { computeCodeChallenge } from './authorize/pkce.js';
export {
  AuthorizationError,
  type AuthorizationRequest,
  type AuthorizationRequestOptions,
  type Prompt,
} from './authorize/request.js';
export type { ClientAuthMethod, PresentedClientCredentials } from './clients/authenticate.js';
export { assertMfaFor, clustersNeedingMfa, type MfaCluster, mfaShortfall } from './clusters/mfa.js';
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
  type UpstreamRecheck,
} from './connectors/types.js';
export type { UpstreamOptions } from './connectors/upstream.js';
export type {
  DeviceApprovalContext,
  DeviceApprover,
  DeviceAuthorizationUnavailable,
  DeviceDecisionOutcome,
  PendingDeviceAuthorization,
} from './device/approval.js';
export { type DeviceAuthorizationContext, startDeviceAuthorization } from './device/authorization.js';
export { formatUserCode } from './device/user-code.js';
export { buildProviderMetadata, type DiscoveryOptions } from './discovery.js';
export { type AnyIdgateError, isIdgateError } from './error-family.js';
export { IdgateError, type IdgateErrorKind, type IdgateErrorOptions, OAuthProtocolError } from './errors.js';
export {
  ACR,
  ACR_VALUES_SUPPORTED,
  type AuthenticationMethod,
  acrOf,
  amrOf,
  wantsMfa,
} from './factors/assurance.js';
export type {
  FactorView,
  SecondFactorCheck,
  SecondFactorNeed,
  TotpEnrolment,
} from './factors/second-factor.js';
export { FACTOR_NAME_LIMIT } from './factors/second-factor.js';
export type { PasskeyCheck, PasskeyRegistration, RelyingParty, WebAuthnFailure } from './factors/webauthn.js';
export { passkeysPossible, relyingPartyOf, WEBAUTHN_CHALLENGE_SECONDS } from './factors/webauthn.js';
export type {
  ExternalPasswordCheck,
  GrantLifetimes,
  GrantStorage,
  TokenEndpointContext,
} from './grants/context.js';
export type { GrantRevocationContext } from './grants/revoke-grant.js';
export {
  type TokenExchangeContext,
  TRUST_CLIENT_PREFIX,
  targetCluster,
  tokenExchangeGrant,
} from './grants/token-exchange.js';
export {
  DEFAULT_REVALIDATE_MAX_STALENESS,
  type UpstreamRevalidation,
  type UpstreamRevalidationContext,
} from './grants/upstream-revalidation.js';
export type { UserTokenRequest } from './grants/user-tokens.js';
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
export { openPrivateKey, openText } from './keys/seal.js';
export { generateSigningKey, type SigningKeyPhase, type SigningKeyState } from './keys/signing-key.js';
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
  FactorKind,
  FactorRecord,
  GrantRecord,
  GrantUpstream,
  GroupRecord,
  IdentityProviderRecord,
  LinkedIdentityRecord,
  LoginAttemptRecord,
  LoginTransactionRecord,
  NewUser,
  NotBeforeRecord,
  NotBeforeScope,
  RefreshTokenRecord,
  RevocationKind,
  RevocationRecord,
  SigningKeyRecord,
  SubjectTokenUseRecord,
  TrustRecord,
  UserPatch,
  UserRecord,
  WebAuthnChallengeRecord,
} from './model.js';
export type { AuditEventListQuery, AuditEventRepository } from './ports/audit-storage.js';
export type { Caller, RequestLog } from './ports/caller.js';
export type { DeclaredObjectRecord, DeclaredObjectRepository } from './ports/declaration-storage.js';
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
export type {
  GroupChanges,
  GroupRepository,
  GroupSummary,
  StoredGroup,
  UserPageQuery,
  UserStatus,
} from './ports/storage.js';
export {
  type ApiKeyRepository,
  type ClientRepository,
  type ClusterRepository,
  type FactorRepository,
  type NotBeforeRepository,
  type RevocationRepository,
  type SigningKeyRepository,
  type Storage,
  StorageConflictError,
  type StorageUnavailability,
  StorageUnavailableError,
  type SubjectTokenUseRepository,
  type TrustRepository,
  type UserRepository,
} from './ports/storage.js';
export { constantTimeEqual, generateSecret, hashSecret, verifySecret } from './secrets.js';
export {
  ADDRESS_LIFT,
  DEFAULT_LOGIN_THROTTLE,
  type LoginAttempt,
  type LoginThrottle,
  type LoginThrottlePolicy,
  type ThrottleDecision,
} from './security/login-throttle.js';
export type { EndSessionContext, LogoutRevocation } from './sessions/end-session.js';
export type { LogoutRequest } from './sessions/logout.js';
export {
  type ExternalSignInResult,
  FEDERATED_AMR,
  type IdentityMapping,
  type IdentityMappingContext,
  type IdentityMappingPolicy,
  signInWithExternalIdentity,
  upstreamAmr,
} from './sign-in/external.js';
export type {
  PasswordSignIn,
  PasswordSignInContext,
  PasswordSignInFailure,
  PasswordSignInRequest,
} from './sign-in/password.js';
export type { IdentityProvider, IdentityProviders } from './sign-in/providers.js';
export {
  SERVICE_IDENTITY,
  TOKEN_REVIEW_DENIAL_MESSAGES,
  TOKEN_REVIEW_EXTRA,
  type TokenReviewContext,
  type TokenReviewDenial,
  type TokenReviewer,
} from './token-review/review.js';
export type {
  AccessTokenInput,
  AccessTokenRejection,
  AccessTokenVerification,
  IssuedAccessToken,
  LiveTokenRejection,
} from './tokens/access-token.js';
export { type LiveAccessToken, type LiveTokenContext, madeBefore } from './tokens/access-token-check.js';
export type { IdTokenInput } from './tokens/id-token.js';
export type { IntrospectionContext } from './tokens/introspection.js';
export {
  type JwsHeader,
  type JwsRejection,
  type JwsVerification,
  signCompactJws,
  verifyCompactJws,
} from './tokens/jws.js';
export type { RevocationContext } from './tokens/revocation.js';
export {
  compileCondition,
  type DecodedSubjectToken,
  evaluateSubjectToken,
  RUN_CLAIMS,
  renderUsername,
  runClaims,
  SUBJECT_TOKEN_ALGORITHMS,
  TRUST_RULE_ERRORS,
  type TrustDecision,
  type TrustMatch,
  type TrustRefusal,
  type TrustRule,
} from './trusts/evaluate.js';
export { createTrustKeySource, type TrustKeySource, type TrustKeys } from './trusts/keys.js';
export type { SpendAndRecord } from './trusts/spent.js';
export type { PasswordLoginContext, PasswordLoginFailure } from './users/authenticate.js';
export { DEFAULT_PASSWORD_POLICY, type PasswordPolicy } from './users/password-policy.js';
