import type { Generated } from 'kysely';
/**
 * Row shapes of the SQL tables, as both dialects store them. Columns are portable types only:
 * booleans are integers 0/1, instants are bigint epoch milliseconds, lists and JWKs are JSON text.
 * The repositories convert to and from the domain records of `@idgate/core`.
 */

export interface UsersTable {
  id: string;
  username: string;
  email: string | null;
  display_name: string | null;
  /** JSON array of strings. */
  groups: string;
  password_hash: string | null;
  /** 0 or 1. */
  disabled: number;
  created_at: number;
  updated_at: number;
}

export interface OAuthClientsTable {
  client_id: string;
  name: string;
  secret_hash: string | null;
  /** 0 or 1. */
  is_public: number;
  /** 0 or 1. */
  trusted: number;
  /** JSON arrays of strings. */
  redirect_uris: string;
  /** Added by 0002_oidc_flows, default '[]'. */
  post_logout_redirect_uris: string;
  grant_types: string;
  scopes: string;
  audiences: string;
  access_token_ttl: number;
  refresh_token_ttl: number;
  /** Added by 0010_client_secrets: the secret a rotation replaced, and until when it is accepted. */
  previous_secret_hash: string | null;
  previous_secret_expires_at: number | null;
  /** Added by 0029_mfa_policies: 0 or 1, every sign-in for the client needs a second factor. */
  require_mfa: number;
  created_at: number;
}

export interface ApiKeysTable {
  id: string;
  name: string;
  prefix: string;
  hash: string;
  /** JSON array of scopes. */
  scopes: string;
  /** The cluster the key is bound to (name and audience), null for none. */
  cluster_name: string | null;
  cluster_audience: string | null;
  created_at: number;
  last_used_at: number | null;
  /** Added by 0010_client_secrets; null: never expires. */
  expires_at: number | null;
  revoked_at: number | null;
}

/** Groups as objects (see `GroupRecord` in @idgate/core); members stay in `users.groups`. */
export interface GroupsTable {
  name: string;
  description: string | null;
  /** Added by 0029_mfa_policies: 0 or 1, its members sign in with a second factor. */
  require_mfa: number;
  created_at: number;
  updated_at: number;
}

export interface ClustersTable {
  /** Lower-case. */
  name: string;
  audience: string;
  /** 0 or 1: tokens for the cluster need the MFA `acr`. */
  require_mfa: number;
  created_at: number;
}

export interface TrustsTable {
  /** Lower-case. */
  name: string;
  issuer: string;
  audience: string;
  /** JSON JWK set, or null (discovery). */
  jwks: string | null;
  discovery_url: string | null;
  condition: string | null;
  username: string;
  /** JSON array. */
  groups: string;
  /** JSON array. */
  clusters: string;
  max_ttl: number;
  created_at: number;
  updated_at: number;
}

export interface SubjectTokenUsesTable {
  issuer: string;
  jti: string;
  expires_at: number;
}

export interface SigningKeysTable {
  kid: string;
  alg: string;
  /** JSON object. */
  public_jwk: string;
  sealed_private_jwk: string;
  created_at: number;
  retired_at: number | null;
  published_until: number | null;
}

/** Not-befores (migration 0021): one row per scope and subject (`''` for the global one). */
export interface NotBeforeTable {
  scope: string;
  subject: string;
  not_before: number;
  set_at: number;
}

export interface RevocationsTable {
  kind: string;
  value: string;
  expires_at: number;
  created_at: number;
}

/**
 * The external identity a sign-in went through (migrations 0013, 0015 and 0018): recorded on the
 * browser session, handed to its authorization codes and device approvals, and kept on the grant,
 * whose refreshes re-check it. All null for a local sign-in.
 */
/** The RFC 8176 `amr` of a sign-in, as a JSON array (0024_factors); null before it or for none. */
export interface AmrColumn {
  amr: string | null;
}

export interface UpstreamColumns {
  /** The identity provider's name. */
  upstream_provider: string | null;
  upstream_subject: string | null;
  /** When the upstream last vouched for the identity (epoch ms). */
  upstream_validated_at: number | null;
  /** When a refresh last claimed a re-check, answered or not (epoch ms); the compare-and-set key. */
  upstream_checked_at: number | null;
  /** The connector's upstream tokens, sealed with the server secret. */
  upstream_state: string | null;
}

export interface GrantsTable extends UpstreamColumns, AmrColumn {
  id: string;
  user_id: string;
  client_id: string;
  /** JSON array of scopes. */
  scope: string;
  auth_time: number;
  session_id: string | null;
  created_at: number;
  expires_at: number;
  revoked_at: number | null;
  /** Null for grants older than migration 0009. */
  last_used_at: number | null;
  last_used_address: string | null;
  /** JSON array of the resources (audiences) the sign-in approved; null for grants older than 0019. */
  resources: string | null;
}

export interface AuthorizationCodesTable extends UpstreamColumns, AmrColumn {
  hash: string;
  client_id: string;
  user_id: string;
  redirect_uri: string;
  /** JSON array of scopes. */
  scope: string;
  nonce: string | null;
  code_challenge: string | null;
  code_challenge_method: string | null;
  /** JSON array of RFC 8707 resources, null when the request named none. */
  resource: string | null;
  auth_time: number;
  session_id: string | null;
  grant_id: string | null;
  created_at: number;
  expires_at: number;
  consumed_at: number | null;
}

export interface RefreshTokensTable {
  hash: string;
  grant_id: string;
  client_id: string;
  user_id: string;
  /** JSON array of scopes. */
  scope: string;
  created_at: number;
  expires_at: number;
  used_at: number | null;
}

export interface BrowserSessionsTable extends UpstreamColumns, AmrColumn {
  id: string;
  secret_hash: string;
  user_id: string;
  auth_time: number;
  created_at: number;
  expires_at: number;
  ended_at: number | null;
  /** Null for sessions older than migration 0009. */
  source_address: string | null;
  user_agent: string | null;
}

export interface ConsentsTable {
  user_id: string;
  client_id: string;
  /** JSON array of scopes. */
  scope: string;
  /** JSON array of the resources consented to; null for consents older than 0019 (none). */
  resources: string | null;
  granted_at: number;
}

export interface InteractionsTable {
  id: string;
  secret_hash: string;
  /** JSON object: the validated authorization request. */
  request: string;
  user_id: string | null;
  auth_time: number | null;
  /** Added by 0024_factors: how the user signed in (JSON array), and a user owing a second factor. */
  amr: string | null;
  pending_user_id: string | null;
  /** The pending user's upstream identity (LDAP), as JSON with instants in ms. */
  pending_upstream: string | null;
  /** SHA-256 of the interaction's CSRF token (the column name predates hashing it). */
  csrf_token: string;
  created_at: number;
  expires_at: number;
}

export interface DeviceAuthorizationsTable extends UpstreamColumns, AmrColumn {
  device_code_hash: string;
  /** Normalised: upper-case, no dash. */
  user_code: string;
  client_id: string;
  /** JSON array of scopes. */
  scope: string;
  /** JSON array of RFC 8707 resources, or null. */
  resource: string | null;
  status: string;
  user_id: string | null;
  auth_time: number | null;
  session_id: string | null;
  created_at: number;
  expires_at: number;
  last_polled_at: number | null;
  interval: number;
  /** 1 when the last poll came sooner than the interval (answered slow_down), else 0. */
  poll_slowed: Generated<number>;
  consumed_at: number | null;
}

export interface LoginAttemptsTable {
  id: string;
  /** Lower-cased. */
  username: string;
  user_id: string | null;
  source_address: string;
  provider: string;
  /** 0 or 1. */
  success: number;
  reason: string | null;
  created_at: number;
  /** The password grant's client; null for the browser's pages. */
  client_id: string | null;
  /** 0 or 1: the account had signed in from this address before this failure. */
  familiar: Generated<number>;
}

export interface IdentityProvidersTable {
  /** Lower-cased. */
  name: string;
  type: string;
  /** JSON object: the validated configuration, secret fields sealed. */
  config: string;
  /** 0 or 1. */
  disabled: number;
  created_at: number;
  updated_at: number;
}

export interface LinkedIdentitiesTable {
  provider: string;
  subject: string;
  user_id: string;
  username: string;
  email: string | null;
  /** Added by 0029_mfa_policies: 0 or 1, a trusted provider verified `email` at the latest sign-in. */
  email_verified: number;
  /** JSON array of strings. */
  groups: string;
  linked_at: number;
  last_login_at: number | null;
}

export interface LoginTransactionsTable {
  state_hash: string;
  provider: string;
  binding_hash: string;
  nonce: string;
  code_verifier: string;
  interaction_id: string | null;
  created_at: number;
  expires_at: number;
  consumed_at: number | null;
}

/** Second factors (0024_factors): `secret` sealed, `counter` a TOTP factor's last accepted step. */
export interface FactorsTable {
  id: string;
  user_id: string;
  kind: string;
  name: string;
  secret: string;
  /** Null for TOTP; a WebAuthn credential's id. */
  credential_id: string | null;
  counter: number | null;
  /** Added by 0028_webauthn: a WebAuthn credential's transports (JSON array); null for TOTP. */
  transports: string | null;
  created_at: number;
  confirmed_at: number | null;
  last_used_at: number | null;
}

/** WebAuthn challenges (0028_webauthn), by the SHA-256 of the challenge; taken once. */
export interface WebauthnChallengesTable {
  id: string;
  purpose: string;
  interaction_id: string;
  user_id: string | null;
  created_at: number;
  expires_at: number;
}

/** A user's recovery codes by SHA-256 (hex). */
export interface RecoveryCodesTable {
  user_id: string;
  hash: string;
  created_at: number;
  used_at: number | null;
}

/** Users an administrator requires a second factor of. */
export interface MfaRequirementsTable {
  user_id: string;
  required_at: number;
}

export interface Schema {
  users: UsersTable;
  oauth_clients: OAuthClientsTable;
  api_keys: ApiKeysTable;
  signing_keys: SigningKeysTable;
  revocations: RevocationsTable;
  not_before: NotBeforeTable;
  grants: GrantsTable;
  authorization_codes: AuthorizationCodesTable;
  clusters: ClustersTable;
  groups: GroupsTable;
  trusts: TrustsTable;
  subject_token_uses: SubjectTokenUsesTable;
  refresh_tokens: RefreshTokensTable;
  browser_sessions: BrowserSessionsTable;
  consents: ConsentsTable;
  interactions: InteractionsTable;
  device_authorizations: DeviceAuthorizationsTable;
  login_attempts: LoginAttemptsTable;
  identity_providers: IdentityProvidersTable;
  linked_identities: LinkedIdentitiesTable;
  login_transactions: LoginTransactionsTable;
  change_log: ChangeLogTable;
  audit_events: AuditEventsTable;
  audit_chain_anchors: AuditChainAnchorsTable;
  factors: FactorsTable;
  recovery_codes: RecoveryCodesTable;
  mfa_requirements: MfaRequirementsTable;
  webauthn_challenges: WebauthnChallengesTable;
  declared_objects: DeclaredObjectsTable;
}

/** Which declaration manager owns which object (see `DeclaredObjectRecord` in @idgate/core). */
export interface DeclaredObjectsTable {
  kind: string;
  name: string;
  object_id: string;
  manager: string;
  secrets: string | null;
  applied_hash: string;
  applied_at: number;
}

/** The audit trail (see `AuditEvent` in @idgate/schema): the envelope as columns, `details` as JSON. */
export interface AuditEventsTable {
  /** ULID-like: sorts by time. */
  id: string;
  type: string;
  occurred_at: number;
  actor_kind: string;
  actor_id: string | null;
  actor_name: string | null;
  /** The event's subject. */
  user_id: string | null;
  client_id: string | null;
  address: string | null;
  user_agent: string | null;
  /** The HTTP request that made the event, and its trace (null outside one; before 0018). */
  request_id: string | null;
  trace_id: string | null;
  outcome: string;
  /** JSON object. */
  details: string;
  /** The tamper-evident chain (0022; null on events stored before it): see `audit/chain.ts`. */
  writer_id: string | null;
  seq: number | null;
  prev_hash: string | null;
  hash: string | null;
}

/** Per writer, the last link the retention purge deleted: where the remaining chain starts. */
export interface AuditChainAnchorsTable {
  writer_id: string;
  seq: number;
  hash: string;
  /** The cutoff (epoch ms) of the purge that moved the anchor. */
  purged_before: number;
}

/**
 * What changed, for replicas (and the CLI) to tell each other: every write that a server may hold
 * in memory (users, clients, API keys, revocations, keys, identity providers, identities) appends
 * a row; servers read the rows after their last one (woken by NOTIFY on PostgreSQL).
 */
export interface ChangeLogTable {
  id: Generated<number>;
  topic: string;
  key: string;
  created_at: number;
}

/** Every table, children first, for code that must visit all of them. */
export const TABLES = [
  'webauthn_challenges',
  'declared_objects',
  'mfa_requirements',
  'recovery_codes',
  'factors',
  'audit_chain_anchors',
  'audit_events',
  'change_log',
  'clusters',
  'groups',
  'trusts',
  'subject_token_uses',
  'login_transactions',
  'linked_identities',
  'identity_providers',
  'login_attempts',
  'interactions',
  'device_authorizations',
  'consents',
  'refresh_tokens',
  'authorization_codes',
  'grants',
  'browser_sessions',
  'revocations',
  'not_before',
  'signing_keys',
  'api_keys',
  'oauth_clients',
  'users',
] as const;
