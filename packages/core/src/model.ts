import type { ApiKeyScope, GrantType, SigningAlgorithm } from '@idgate/schema';

/** A local user as storage holds it. `groups` are the user's own (not from external IdPs). */
export interface UserRecord {
  id: string;
  username: string;
  email: string | null;
  displayName: string | null;
  groups: string[];
  /** An encoded password hash (argon2id PHC string), or null for users without a password. */
  passwordHash: string | null;
  disabled: boolean;
  createdAt: Date;
  updatedAt: Date;
  /**
   * Read, never stored on the user: `email` is the one a linked identity's provider verified at its
   * latest sign-in, and the provider is trusted for it (`trustEmailVerified`). See
   * `withIdentityGroups`; absent means not.
   */
  emailVerified?: boolean;
}

/** The fields a caller supplies to create a user. */
export type NewUser = Pick<
  UserRecord,
  'id' | 'username' | 'email' | 'displayName' | 'groups' | 'passwordHash'
> & {
  disabled?: boolean;
  createdAt: Date;
};

/** The fields of a user that can change. */
export type UserPatch = Partial<
  Pick<UserRecord, 'email' | 'displayName' | 'groups' | 'passwordHash' | 'disabled'>
> & {
  updatedAt: Date;
};

/** A registered OAuth client. */
export interface ClientRecord {
  clientId: string;
  name: string;
  /** SHA-256 of the client secret (base64url), null for public clients. */
  secretHash: string | null;
  public: boolean;
  /** Trusted clients may use the password grant and skip consent. */
  trusted: boolean;
  redirectUris: string[];
  /** Where RP-Initiated Logout may send the browser afterwards (`post_logout_redirect_uri`). */
  postLogoutRedirectUris: string[];
  grantTypes: GrantType[];
  scopes: string[];
  /** Resource audiences put into this client's access tokens; empty means `aud` = the client id. */
  audiences: string[];
  /** Access token lifetime in seconds. */
  accessTokenTtl: number;
  /** Refresh token lifetime in seconds. */
  refreshTokenTtl: number;
  /** SHA-256 of the secret a rotation replaced, accepted until `previousSecretExpiresAt`; absent or null for none. */
  previousSecretHash?: string | null;
  previousSecretExpiresAt?: Date | null;
  /** Every sign-in for this client needs a second factor (the MFA `acr`); absent means false. */
  requireMfa?: boolean;
  createdAt: Date;
}

/** An API key: only its public prefix and a hash of the whole key are stored. */
export interface ApiKeyRecord {
  id: string;
  name: string;
  /** The key's public, non-secret prefix (`idg_` + 8 characters); used to find the record. */
  prefix: string;
  /** SHA-256 of the whole key (base64url). */
  hash: string;
  scopes: ApiKeyScope[];
  /**
   * The cluster a `tokenreview` key answers for: it authenticates only tokens for that cluster's
   * audience. Null for a key that is bound to no cluster.
   */
  cluster: ApiKeyCluster | null;
  createdAt: Date;
  lastUsedAt: Date | null;
  /** When the key stops working; absent or null for a key that works until revoked. */
  expiresAt?: Date | null;
  revokedAt: Date | null;
}

/** The cluster an API key is bound to, kept with the key so a review needs no other lookup. */
export interface ApiKeyCluster {
  name: string;
  audience: string;
}

/** A Kubernetes cluster registered with idgate: its access tokens carry `audience`. */
export interface ClusterRecord {
  /** Lower-case name, unique. */
  name: string;
  /** The `aud` of tokens for this cluster (RFC 8707 `resource`); unique. */
  audience: string;
  /** Tokens for this cluster need the MFA `acr` (a sign-in with a second factor). */
  requireMfa: boolean;
  createdAt: Date;
}

/**
 * A group, stored apart from its members (users' `groups`): it exists with no member too. Names
 * are exact (case-sensitive, as Kubernetes compares groups).
 */
export interface GroupRecord {
  name: string;
  description: string | null;
  /** Its members sign in with a second factor (the MFA `acr`); absent means false. */
  requireMfa?: boolean;
  createdAt: Date;
  updatedAt: Date;
}

/**
 * A trust: tokens of an external issuer (a CI system, a cluster's service accounts) that the token
 * exchange (RFC 8693) accepts for short-lived access tokens to some clusters.
 */
export interface TrustRecord {
  /** Lower-case name, unique. */
  name: string;
  issuer: string;
  /** The `aud` the subject tokens must carry. */
  audience: string;
  /** Keys given inline (public JWKs); null: fetched through discovery. */
  jwks: { keys: Array<Record<string, unknown>> } | null;
  /** Where discovery is read; null: `{issuer}/.well-known/openid-configuration`. */
  discoveryUrl: string | null;
  /** A CEL expression over `claims`; null: always true. */
  condition: string | null;
  /** `{claim}` template of the resulting username. */
  username: string;
  groups: string[];
  /** Names of the clusters the trust's tokens may reach. */
  clusters: string[];
  /** The longest lifetime of an exchanged token, seconds. */
  maxTtl: number;
  createdAt: Date;
  updatedAt: Date;
}

/** A subject token's `jti`, spent by an exchange: kept until the token expires. */
export interface SubjectTokenUseRecord {
  issuer: string;
  jti: string;
  expiresAt: Date;
}

/** A signing key pair; the private JWK is sealed (encrypted) with the configured secret. */
export interface SigningKeyRecord {
  kid: string;
  alg: SigningAlgorithm;
  publicJwk: Record<string, unknown>;
  /** AES-256-GCM sealed private JWK (see `sealPrivateKey`). */
  sealedPrivateJwk: string;
  createdAt: Date;
  /** When the key stopped signing; null while it is the active key. */
  retiredAt: Date | null;
  /** A retired key stays in JWKS until this instant (its last token's expiry). */
  publishedUntil: Date | null;
}

/** Whose tokens a not-before covers: all of them, a client's or a user's. */
export type NotBeforeScope = 'global' | 'client' | 'user';

/**
 * A not-before (Keycloak's): every token, grant, session and code of its scope issued before
 * `notBefore` is refused.
 */
export interface NotBeforeRecord {
  scope: NotBeforeScope;
  /** The client id or the user id; `''` for `global`. */
  subject: string;
  notBefore: Date;
  /** When it was last raised. */
  setAt: Date;
}

/** What a revocation entry revokes: one token (`jti`), a whole grant (`sid`). */
export type RevocationKind = 'jti' | 'sid';

/** An entry of the revocation set that every replica consults. */
export interface RevocationRecord {
  kind: RevocationKind;
  value: string;
  /** After this instant the entry is useless (everything it revoked has expired) and may be purged. */
  expiresAt: Date;
  createdAt: Date;
}

/**
 * A grant: one user's authorization of one client, from one sign-in. Its id is the `sid` of every
 * token it produced, so revoking the grant revokes them all.
 */
export interface GrantRecord {
  id: string;
  userId: string;
  clientId: string;
  scope: string[];
  /** When the user authenticated. */
  authTime: Date;
  /** The browser session the grant came from, if any (logout may revoke its grants). */
  sessionId: string | null;
  createdAt: Date;
  /** The absolute end of the grant: no refresh token outlives it. */
  expiresAt: Date;
  revokedAt: Date | null;
  /** The latest token request on the grant (its opening, then each refresh); absent when not recorded. */
  lastUsedAt?: Date | null;
  /** The caller's address at that request. */
  lastUsedAddress?: string | null;
  /** The external identity the grant came from, re-checked on refresh; absent or null for none. */
  upstream?: GrantUpstream | null;
  /**
   * How the person authenticated (RFC 8176 `amr` values: `pwd`, `otp`, `mfa`), as the sign-in
   * recorded it; absent or null for an upstream sign-in or one recorded before idgate kept it.
   */
  amr?: string[] | null;
  /**
   * The audiences (RFC 8707 resources: cluster audiences, APIs) the person approved at sign-in;
   * every token of the grant is for some of them, and a refresh may ask for a subset, never
   * another (RFC 8707 §2.2). Absent or null for a grant opened before idgate recorded them: such
   * a grant is refreshed only without `resource`.
   */
  resources?: string[] | null;
}

/** The external identity behind a grant, as its refreshes re-check it upstream. */
export interface GrantUpstream {
  /** The identity provider's (lower-case) name. */
  provider: string;
  /** The identity's subject at the provider. */
  subject: string;
  /**
   * When the upstream last vouched for the identity: the sign-in, then each re-check it answered.
   * A refresh more than the policy's `revalidateMaxStaleness` after it, with the upstream still
   * not answering, revokes the grant.
   */
  validatedAt: Date;
  /**
   * When a refresh last claimed a re-check, answered or not (the sign-in at first): the next is
   * due an interval after it. Compare-and-set on it lets one of concurrent refreshes ask.
   */
  checkedAt: Date;
  /**
   * The connector's upstream state (its upstream tokens), sealed with the server secret (see
   * `sealUpstreamState`); null when the connector keeps none and so cannot re-check.
   */
  sealedState: string | null;
}

/** PKCE methods (RFC 7636 §4.2). */
export type CodeChallengeMethod = 'S256' | 'plain';

/** An authorization code: stored by its hash, single use (RFC 6749 §4.1.2). */
export interface AuthorizationCodeRecord {
  /** SHA-256 of the code (base64url). */
  hash: string;
  clientId: string;
  userId: string;
  redirectUri: string;
  scope: string[];
  nonce: string | null;
  codeChallenge: string | null;
  codeChallengeMethod: CodeChallengeMethod | null;
  /**
   * The RFC 8707 resources the person approved: those the authorization request named, or the
   * client's audiences when it named none; null for a client without audiences.
   */
  resource: string[] | null;
  authTime: Date;
  sessionId: string | null;
  /**
   * The external identity the sign-in went through (from the browser session), handed to the
   * grant the code opens so its refreshes re-check it upstream; absent or null for a local sign-in.
   */
  upstream?: GrantUpstream | null;
  /**
   * How the person authenticated (RFC 8176 `amr` values: `pwd`, `otp`, `mfa`), as the sign-in
   * recorded it; absent or null for an upstream sign-in or one recorded before idgate kept it.
   */
  amr?: string[] | null;
  /** The grant the code was redeemed into; a replay revokes it. */
  grantId: string | null;
  createdAt: Date;
  expiresAt: Date;
  consumedAt: Date | null;
}

/** A refresh token: stored by its hash, rotated on every use (RFC 9700 §4.14.2). */
export interface RefreshTokenRecord {
  hash: string;
  grantId: string;
  clientId: string;
  userId: string;
  scope: string[];
  createdAt: Date;
  /** Idle expiry, never after the grant's absolute expiry. */
  expiresAt: Date;
  /** When it was exchanged for its successor; presenting it again after that is reuse. */
  usedAt: Date | null;
}

/** A signed-in browser: the cookie holds a random secret, storage only its hash. */
export interface BrowserSessionRecord {
  /** A non-secret id, referenced by grants. */
  id: string;
  /** SHA-256 of the cookie secret. */
  secretHash: string;
  userId: string;
  authTime: Date;
  createdAt: Date;
  expiresAt: Date;
  endedAt: Date | null;
  /** The address the browser signed in from; absent when not recorded. */
  sourceAddress?: string | null;
  /** The browser's `User-Agent` at sign-in (at most 512 characters). */
  userAgent?: string | null;
  /**
   * The external identity the browser signed in through (an OIDC, GitHub, GitLab or LDAP
   * provider), as the grants opened from this session carry it; absent or null for a local sign-in.
   */
  upstream?: GrantUpstream | null;
  /**
   * How the person authenticated (RFC 8176 `amr` values: `pwd`, `otp`, `mfa`), as the sign-in
   * recorded it; absent or null for an upstream sign-in or one recorded before idgate kept it.
   */
  amr?: string[] | null;
}

/** A user's remembered consent to a client's scopes and resources. */
export interface ConsentRecord {
  userId: string;
  clientId: string;
  scope: string[];
  /**
   * The RFC 8707 resources (cluster audiences, APIs) consented to; absent or null for a consent
   * remembered before idgate recorded them, which covers none.
   */
  resources?: string[] | null;
  grantedAt: Date;
}

/** Where a device authorization stands (RFC 8628 §3.4–3.5). */
export type DeviceAuthorizationStatus = 'pending' | 'approved' | 'denied' | 'consumed';

/**
 * A device authorization request (RFC 8628 §3.1): stored by the hash of its device code; the user
 * code (normalised: upper-case, no dash) is unique among live ones. Single use: once tokens are
 * issued it is `consumed`.
 */
export interface DeviceAuthorizationRecord {
  /** SHA-256 of the device code (base64url). */
  deviceCodeHash: string;
  /** The user code without its dash, upper-case (`BCDFGHJK`). */
  userCode: string;
  clientId: string;
  scope: string[];
  /**
   * The RFC 8707 resources the device's grant will cover, as the confirmation page names them:
   * those asked for at the device authorization endpoint, or the client's audiences when it asked
   * for none; null for a client without audiences.
   */
  resource: string[] | null;
  status: DeviceAuthorizationStatus;
  /** Who approved it (or denied it), and when they authenticated. */
  userId: string | null;
  authTime: Date | null;
  /** The browser session of the approval, if any (logout may revoke its grant). */
  sessionId: string | null;
  /**
   * The external identity the approver signed in through, handed to the grant; absent or null
   * for a local sign-in.
   */
  upstream?: GrantUpstream | null;
  /**
   * How the person authenticated (RFC 8176 `amr` values: `pwd`, `otp`, `mfa`), as the sign-in
   * recorded it; absent or null for an upstream sign-in or one recorded before idgate kept it.
   */
  amr?: string[] | null;
  createdAt: Date;
  expiresAt: Date;
  /** The device's latest poll; polling sooner than `interval` after it is `slow_down`. */
  lastPolledAt: Date | null;
  /** Seconds the device must wait between polls; grows by 5 at every `slow_down`. */
  interval: number;
  consumedAt: Date | null;
}

/** One password sign-in attempt, kept for brute-force protection and audit. */
export interface LoginAttemptRecord {
  id: string;
  /** The username as typed, lower-cased. */
  username: string;
  userId: string | null;
  sourceAddress: string;
  /** `password` for local accounts; the identity provider's name for federated ones. */
  provider: string;
  success: boolean;
  /** Why it failed: `invalid_credentials`, `disabled`, `locked`. */
  reason: string | null;
  createdAt: Date;
  /** The client of a password grant; null (or absent) for the login page and the device page. */
  clientId?: string | null;
  /**
   * Whether the account had signed in successfully from this address before this failure: smart
   * lockout counts failures from familiar addresses apart from the others.
   */
  familiar?: boolean;
}

/** An identity provider kept in the database; its secrets are sealed with the configured secret. */
export interface IdentityProviderRecord {
  /** Lower-case name, the `{callback}` path segment. */
  name: string;
  type: 'oidc' | 'github' | 'gitlab' | 'ldap';
  /** The validated configuration with secret fields sealed (see `sealSecret`). */
  config: Record<string, unknown>;
  disabled: boolean;
  createdAt: Date;
  updatedAt: Date;
}

/** An external identity linked to a local user; groups are refreshed at every sign-in. */
export interface LinkedIdentityRecord {
  provider: string;
  subject: string;
  userId: string;
  username: string;
  email: string | null;
  /**
   * The provider verified `email` at the latest sign-in, and is trusted for it
   * (`trustEmailVerified`); absent means not.
   */
  emailVerified?: boolean;
  groups: string[];
  linkedAt: Date;
  lastLoginAt: Date | null;
}

/**
 * A sign-in at an external provider in progress: created at `GET /oauth/login/{idp}`, consumed at
 * the callback. Bound to the browser by a cookie whose secret is stored as a hash.
 */
export interface LoginTransactionRecord {
  /** SHA-256 of the `state` sent upstream. */
  stateHash: string;
  provider: string;
  /** SHA-256 of the browser-binding cookie secret. */
  bindingHash: string;
  nonce: string;
  codeVerifier: string;
  /** The pending authorization interaction to continue, if the sign-in came from one. */
  interactionId: string | null;
  createdAt: Date;
  expiresAt: Date;
  consumedAt: Date | null;
}

/** What kind of second factor a {@link FactorRecord} is: a TOTP authenticator, or a WebAuthn credential (a passkey or security key). */
export type FactorKind = 'totp' | 'webauthn';

/**
 * A user's second factor, named by the user. A TOTP factor holds its secret sealed with the
 * server secret (see `sealText`) and the last time step a code was accepted for, so a code is
 * accepted once. A factor whose enrolment was not confirmed yet has `confirmedAt` null and does
 * not count for sign-in.
 */
export interface FactorRecord {
  id: string;
  userId: string;
  kind: FactorKind;
  name: string;
  /**
   * The sealed secret (a TOTP key), never shown after enrolment; for a WebAuthn credential its
   * COSE public key in base64url (public, so not sealed, and never shown either).
   */
  sealedSecret: string;
  /**
   * The last RFC 6238 time step accepted (TOTP); null before the first. For a WebAuthn
   * credential, its signature counter (0 for authenticators that keep none).
   */
  lastUsedStep: number | null;
  /** A WebAuthn credential's id (base64url), unique across users; null for TOTP. */
  credentialId: string | null;
  /** A WebAuthn credential's transports as its authenticator reported them; null for TOTP. */
  transports: string[] | null;
  createdAt: Date;
  confirmedAt: Date | null;
  lastUsedAt: Date | null;
}

/**
 * A WebAuthn challenge handed to a browser: single use (taken once, whatever the outcome), short
 * lived, and bound to the interaction (sign-in or account page form) it was issued for, and for a
 * registration to the user.
 */
export interface WebAuthnChallengeRecord {
  /** SHA-256 (base64url) of the challenge; the challenge itself is not stored. */
  id: string;
  purpose: 'register' | 'authenticate';
  interactionId: string;
  /** The user registering, or the user owing a second factor; null for a passkey sign-in. */
  userId: string | null;
  createdAt: Date;
  expiresAt: Date;
}
