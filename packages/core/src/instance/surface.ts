import type {
  ApiKeyScope,
  DeviceAuthorizationResponse,
  FormValues,
  IntrospectionResponse,
  ProviderMetadata,
  TokenResponse,
  TokenReviewRequest,
  TokenReviewResponse,
  UserInfo,
} from '@idgate/schema';
import type { AdminPorts } from '../admin/ports.js';
import type { AuditEventDraft, AuditEventIds, RequestOrigin } from '../audit/record.js';
import type { ConsentGiven } from '../authorize/consent.js';
import type { Authentication, AuthorizationStep } from '../authorize/flow.js';
import type { AuthorizationRequest } from '../authorize/request.js';
import type { ClientAuthMethod, PresentedClientCredentials } from '../clients/authenticate.js';
import type { ExternalIdentity } from '../connectors/types.js';
import type {
  DeviceApprover,
  DeviceAuthorizationUnavailable,
  DeviceDecisionOutcome,
  PendingDeviceAuthorization,
} from '../device/approval.js';
import type { DiscoveryOptions } from '../discovery.js';
import type { AuthenticationMethod } from '../factors/assurance.js';
import type {
  FactorView,
  SecondFactorCheck,
  SecondFactorNeed,
  TotpEnrolment,
} from '../factors/second-factor.js';
import type { PasskeyCheck, PasskeyRegistration } from '../factors/webauthn.js';
import type { ApiKeyRecord, ClientRecord, GrantUpstream, UserRecord } from '../model.js';
import type { Caller } from '../ports/caller.js';
import type { Clock, Random } from '../ports/runtime.js';
import type { Storage } from '../ports/storage.js';
import type { LoginThrottle } from '../security/login-throttle.js';
import type { EndSessionOptions } from '../sessions/end-session.js';
import type { LogoutRequest } from '../sessions/logout.js';
import type { IdentityMapping } from '../sign-in/external.js';
import type { PasswordSignIn, PasswordSignInRequest } from '../sign-in/password.js';
import type { IdentityProvider, IdentityProviders } from '../sign-in/providers.js';
import type { TokenReviewer } from '../token-review/review.js';
import type { AccessTokenVerification, LiveTokenRejection } from '../tokens/access-token.js';
import type { LiveAccessToken } from '../tokens/access-token-check.js';
import type { TrustKeySource } from '../trusts/keys.js';

/** An external sign-in that found its user, with what the grants it opens keep to re-check them upstream. */
export type ExternalSignIn = Extract<IdentityMapping, { ok: true }> & {
  upstream: GrantUpstream;
  /** How the person signed in (RFC 8176): `['fed', 'mfa']` when the upstream's second factor is trusted, else null. */
  amr: string[] | null;
};

/** What an idgate instance ({@link createIdgate}) offers a host: every endpoint and use case, built once. */
export interface Idgate {
  readonly issuer: string;
  readonly clock: Clock;
  readonly random: Random;
  /** The ids of the instance's audit events (a host that writes some itself shares them). */
  readonly auditIds: AuditEventIds;
  /** The storage the instance runs over (with the host's cache in front): a host's reads go here too. */
  readonly storage: Storage;
  readonly providers: IdentityProviders;
  /** Brute-force protection of every password sign-in. */
  readonly throttle: LoginThrottle;
  /**
   * The ports the administrative use cases run over, acting as `system`; a host acting for someone
   * passes `{ ...idgate.admin, auditActor }`.
   */
  readonly admin: AdminPorts;
  /** Where the keys of trusts are fetched and cached (token exchange, and testing a trust). */
  readonly trustKeys: TrustKeySource;

  /** The token endpoint (RFC 6749 §3.2); `caller` is who asks this time. */
  token(form: FormValues, authorization: string | undefined, caller?: Caller): Promise<TokenResponse>;
  /** A Kubernetes TokenReview, by `reviewer` (an API key bound to a cluster answers only for it). */
  reviewToken(review: TokenReviewRequest, reviewer?: TokenReviewer): Promise<TokenReviewResponse>;
  /** UserInfo (OIDC Core §5.3) for a bearer access token. */
  userinfo(accessToken: string | undefined): Promise<UserInfo>;
  /** Introspection (RFC 7662) for an authenticated client. */
  introspect(token: string, hint: string | undefined): Promise<IntrospectionResponse>;
  /** Revocation (RFC 7009) by an authenticated client; `caller` is who asks this time. */
  revoke(token: string, hint: string | undefined, client: ClientRecord, caller?: Caller): Promise<void>;
  /** Whether an access token is live, and for whom. */
  checkAccessToken(
    token: string,
  ): Promise<{ ok: true; token: LiveAccessToken } | { ok: false; reason: LiveTokenRejection }>;
  /** The JWT checks of an access token alone (signature, issuer, type, expiry). */
  verifyAccessToken(token: string): Promise<AccessTokenVerification>;
  /** Client authentication at the token, revocation and introspection endpoints. */
  authenticateClient(
    presented: PresentedClientCredentials,
  ): Promise<{ client: ClientRecord; method: ClientAuthMethod }>;
  /**
   * A presented API key with `scope` (null: any): a key that authenticated before is answered from
   * the read cache without a storage read; any other is checked against storage. With `denied`
   * (which tells, when asked, the operation and where the request came from), a live key that
   * lacks the scope is recorded as `api-key.denied` before it is refused.
   * @throws ApiKeyError (as a rejected promise).
   */
  authenticateApiKey(
    presented: string | undefined,
    scope: ApiKeyScope | null,
    denied?: () => RequestOrigin & { operation: string },
  ): Promise<ApiKeyRecord>;
  /** The OpenID provider metadata of this instance. */
  metadata(options: Omit<DiscoveryOptions, 'issuer' | 'grantTypes'>): ProviderMetadata;

  readonly signIn: {
    /** Password sign-in, local or at a password provider: the login page's and the CLI's. */
    password(request: PasswordSignInRequest): Promise<PasswordSignIn>;
    /**
     * A sign-in through an external provider, mapped to a local user and recorded; `forClient`
     * is the client the sign-in is for (the authorization request's, the token client's), for
     * the audit trail.
     */
    external(
      identity: ExternalIdentity,
      provider: IdentityProvider,
      caller: Caller,
      forClient?: string | null,
    ): Promise<ExternalSignIn | Extract<IdentityMapping, { ok: false }>>;
    /** Records a sign-in the upstream provider itself refused (for `forClient`, when known). */
    upstreamRefusal(
      provider: string,
      reason: string,
      caller: Caller,
      forClient?: string | null,
    ): Promise<void>;
  };
  readonly federation: {
    /** The token answer of a federated sign-in with no authorization request waiting. */
    issueTokens(
      user: UserRecord,
      client: ClientRecord,
      upstream: GrantUpstream | undefined,
      caller: Caller,
      amr?: string[] | null,
    ): Promise<TokenResponse>;
  };
  readonly authorize: {
    validate(params: FormValues): Promise<{ request: AuthorizationRequest; client: ClientRecord }>;
    next(
      request: AuthorizationRequest,
      client: ClientRecord,
      authentication: Authentication | undefined,
      options?: { consentGiven?: boolean },
    ): Promise<AuthorizationStep>;
    issueCode(
      request: AuthorizationRequest,
      authentication: Authentication,
      origin: RequestOrigin,
    ): Promise<string>;
    /** Remembers a consent to the scopes and resources of a request (see `giveConsent`). */
    consent(userId: string, clientId: string, given: ConsentGiven, origin: RequestOrigin): Promise<void>;
  };
  readonly device: {
    /** The device authorization endpoint (RFC 8628 §3.1). */
    start(form: FormValues, authorization: string | undefined): Promise<DeviceAuthorizationResponse>;
    /** A user code typed on the verification page (see `enterUserCode`). */
    enterUserCode(
      input: string,
      address: string,
      userAgent?: string | null,
    ): Promise<PendingDeviceAuthorization | DeviceAuthorizationUnavailable>;
    find(deviceCodeHash: string): Promise<PendingDeviceAuthorization | DeviceAuthorizationUnavailable>;
    approve(deviceCodeHash: string, approver: DeviceApprover): Promise<DeviceDecisionOutcome>;
    deny(deviceCodeHash: string, approver: DeviceApprover): Promise<DeviceDecisionOutcome>;
  };
  readonly logout: {
    validate(params: FormValues): Promise<LogoutRequest>;
    endSession(sessionId: string, options: EndSessionOptions): Promise<number>;
  };
  /**
   * Second factors: enrolment from the account page, the check after the password, and what
   * administrators do (list, remove, reset, require). Codes are checked once per time step and
   * counted by the login throttle under the account `second-factor`.
   */
  readonly factors: {
    need(userId: string): Promise<SecondFactorNeed>;
    list(userId: string): Promise<FactorView[]>;
    startTotp(user: UserRecord, name: string): Promise<TotpEnrolment>;
    confirmTotp(
      user: UserRecord,
      factorId: string,
      code: string,
      caller: Caller,
    ): Promise<{ ok: true; recoveryCodes: string[] | null } | { ok: false }>;
    /** Checks the code typed after `firstMethods` (`['pwd']`); the answer carries the sign-in's `amr`. */
    verify(
      user: UserRecord,
      code: string,
      firstMethods: readonly AuthenticationMethod[],
      caller: Caller,
    ): Promise<SecondFactorCheck>;
    /** The `navigator.credentials.create()` options for a passkey of `user`, bound to the form's interaction. */
    startPasskeyRegistration(user: UserRecord, interactionId: string): Promise<Record<string, unknown>>;
    /** Verifies the browser's answer (its JSON) and stores the passkey named `name`. */
    finishPasskeyRegistration(
      user: UserRecord,
      interactionId: string,
      name: string,
      answer: string,
      caller: Caller,
    ): Promise<PasskeyRegistration>;
    /**
     * The `navigator.credentials.get()` options: for a passkey sign-in (`user` null, user
     * verification required) or as the second factor of `user`.
     */
    startPasskeyAssertion(user: UserRecord | null, interactionId: string): Promise<Record<string, unknown>>;
    /** Verifies a passkey assertion (its JSON); the answer carries the sign-in's user and `amr`. */
    verifyPasskey(
      user: UserRecord | null,
      interactionId: string,
      answer: string,
      firstMethods: readonly AuthenticationMethod[],
      caller: Caller,
    ): Promise<PasskeyCheck>;
    regenerateRecoveryCodes(user: UserRecord, caller: Caller): Promise<string[]>;
    /** Removes one factor, or (`factorId` undefined) every factor and recovery code; how many factors. */
    remove(
      user: UserRecord,
      factorId: string | undefined,
      actor: AuditEventDraft['actor'],
      caller: Caller,
    ): Promise<number>;
    require(
      user: UserRecord,
      required: boolean,
      actor: AuditEventDraft['actor'],
      caller: Caller,
    ): Promise<void>;
  };
}
