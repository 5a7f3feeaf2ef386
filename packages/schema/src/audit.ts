import * as z from 'zod/mini';
import { PageQuery, pageOf } from './admin/page.js';
import { checked } from './checked.js';

// Every event schema is a plain `z.object`: parsing drops any field it does not list, so a value
// that slipped into a draft (a secret, a hash) never reaches storage or a reader. Secrets, tokens,
// codes and passwords have no field anywhere below.

import { Timestamp } from './admin/fields.js';

const Scopes = z.array(z.string());
/** RFC 8707 resources (cluster audiences, APIs); absent from events older than their recording. */
const Resources = z.optional(z.array(z.string()));

/**
 * Who did what an audit event records: a `user` (signing in, consenting, approving a device), a
 * `client` (redeeming a code, refreshing, revoking), an `api-key` or the `cli` (admin changes, key
 * rotation), or idgate itself (`system`: an automatic phase change, an aggregated review). `id` is
 * null when there is none to name (a sign-in with an unknown username); `name` is for people.
 * @example AuditActor.parse({ kind: 'api-key', id: 'k1', name: 'idg_ab12' })
 */
export const AuditActor = z.object({
  kind: z.enum(['user', 'client', 'api-key', 'cli', 'system']),
  id: z.nullable(z.string()),
  name: z.optional(z.string()),
});
export type AuditActor = z.infer<typeof AuditActor>;

/**
 * `success` when the action happened; `failure` when it was refused (a wrong password, a replayed
 * code, a denied review).
 */
export const AuditOutcome = z.enum(['success', 'failure']);
export type AuditOutcome = z.infer<typeof AuditOutcome>;

/** How someone signed in: a local password, an LDAP bind, or an upstream identity provider. */
const SignInMethod = z.enum(['password', 'ldap', 'upstream']);
/** Where a sign-in came from: the login page, the password grant or the CLI. */
const SignInChannel = z.enum(['browser', 'password-grant', 'cli']);

const SignInDetails = z.object({
  method: SignInMethod,
  /** `password` for local accounts, else the identity provider's name. */
  provider: z.string(),
  channel: SignInChannel,
  /** The username as typed, lower-cased (or the upstream's username): personal data. */
  username: z.nullable(z.string()),
  /** Why it failed or was locked: `invalid_credentials`, `disabled`, `locked`, `unknown_user`, …; null on success. */
  reason: z.nullable(z.string()),
  /**
   * How many of the groups the provider reported were not kept (invalid names, or past
   * `LIMITS.upstreamGroupsPerIdentity`); null when no provider reported groups (local passwords,
   * refusals).
   */
  groupsDropped: z.nullable(checked(z.int(), z.nonnegative())),
  /**
   * An upstream sign-in only: whether the upstream's second factor was trusted (the provider's
   * `trustUpstreamMfa` matched its ID token's `amr` or `acr`), so the sign-in counts as MFA.
   */
  upstreamMfaTrusted: z.optional(z.boolean()),
});

/** The fields every audit event carries; `details` is the type's own. */
const envelope = {
  /** Sortable: 10 characters of time, then 16 random ones (Crockford base32, ULID-like). */
  id: z.string(),
  occurredAt: Timestamp,
  actor: AuditActor,
  /** The user the event is about (who signed in, whose token, which user an admin changed). */
  subject: z.nullable(z.string()),
  /** The OAuth client involved, when there is one. */
  clientId: z.nullable(z.string()),
  /** The caller's address: personal data, null when unknown or switched off. */
  address: z.nullable(z.string()),
  /**
   * The caller's user agent (at most `LIMITS.userAgentLength` characters): personal data, null when
   * unknown or switched off.
   */
  userAgent: z.nullable(z.string()),
  /**
   * The id of the HTTP request that made the event (its `X-Request-Id`, or the one idgate gave it,
   * as the log names it); null outside a request (the CLI, background jobs, aggregated reviews).
   */
  requestId: z.nullable(z.string()),
  /** The OpenTelemetry trace id of the request (32 hex digits); null when tracing is off or outside one. */
  traceId: z.nullable(z.string()),
  outcome: AuditOutcome,
};

const event = <T extends string, D extends z.ZodMiniObject>(type: T, details: D) =>
  z.object({ ...envelope, type: z.literal(type), details });

const GrantDetails = z.object({ grantId: z.string() });

/**
 * An authorization code's id in the trail: derived one way from the code's stored hash, so it
 * names the code in `code.issued`, `code.redeemed` and `code.replayed` alike and is no use to
 * redeem it.
 */
const CodeId = z.string();

/**
 * One event type per security-relevant action, each closed: `details` holds exactly the fields
 * listed. Parse with {@link AuditEvent}; narrow on `type`.
 */
export const AUDIT_EVENT_SCHEMAS = {
  /** Someone signed in (a browser session opened, or a password grant authenticated). */
  'sign-in.succeeded': event('sign-in.succeeded', SignInDetails),
  /** A sign-in was refused: wrong password, unknown user, disabled account, upstream refusal. */
  'sign-in.failed': event('sign-in.failed', SignInDetails),
  /** A sign-in was refused because the account or the address is locked out (too many failures). */
  'sign-in.locked': event('sign-in.locked', SignInDetails),
  /**
   * A failed sign-in started a lockout (see `bruteForce.*`): of the account (`subject` names its
   * user when there is one), of the source address, or of a client's password grant, until
   * `lockedUntil`. Acted by `system`, outcome `failure`.
   */
  'lockout.started': event(
    'lockout.started',
    z.object({
      scope: z.enum(['account', 'address', 'client']),
      /** `password` for local accounts, else the password provider's name. */
      provider: z.string(),
      /** The username of the failed sign-in that started it, as typed, lower-cased (personal data). */
      username: z.nullable(z.string()),
      /** When the lockout ends unless more failures come. */
      lockedUntil: Timestamp,
    }),
  ),
  /**
   * A second factor was enrolled: a TOTP authenticator confirmed with a valid code, or a passkey
   * (`webauthn`) registered, by its user on the account page. Never the secret or key.
   */
  'factor.enrolled': event(
    'factor.enrolled',
    z.object({ factorId: z.string(), kind: z.enum(['totp', 'webauthn']), name: z.string() }),
  ),
  /**
   * Second factors were removed: one (`factorId`), or every factor and recovery code of the user
   * (`factorId` null, `removed` counts them), by the user or an administrator (see `actor`).
   */
  'factor.removed': event(
    'factor.removed',
    z.object({ factorId: z.nullable(z.string()), removed: checked(z.int(), z.nonnegative()) }),
  ),
  /** A second factor signed someone in (or confirmed who they are): a TOTP code accepted. */
  'factor.used': event(
    'factor.used',
    z.object({
      factorId: z.string(),
      kind: z.enum(['totp', 'webauthn']),
      passwordless: z.optional(z.boolean()),
    }),
  ),
  /**
   * A second factor was refused: `invalid_code` (wrong, stale or replayed code, or a used recovery
   * code), `locked` (too many failures, see `bruteForce.*`). For a passkey (`kind` `webauthn`, in
   * its `ceremony`, `register` or `authenticate`, of `factorId` when known): `challenge` (unknown,
   * used, expired or issued for another form), `unknown_credential` (unknown or removed),
   * `origin` (another origin or RP ID), `user_verification` (none where it is required), `counter`
   * (the signature counter did not move forward), `name_taken`, `invalid` (anything else).
   */
  'factor.failed': event(
    'factor.failed',
    z.object({
      reason: z.enum([
        'invalid_code',
        'locked',
        'challenge',
        'unknown_credential',
        'origin',
        'user_verification',
        'counter',
        'name_taken',
        'invalid',
      ]),
      kind: z.optional(z.enum(['totp', 'webauthn'])),
      ceremony: z.optional(z.enum(['register', 'authenticate'])),
      factorId: z.optional(z.string()),
    }),
  ),
  /** A recovery code stood in for a second factor; `left` counts the unused codes after it. */
  'recovery-code.used': event('recovery-code.used', z.object({ left: checked(z.int(), z.nonnegative()) })),
  /** A new set of recovery codes replaced the old one (which no longer works). Never the codes. */
  'recovery-codes.generated': event(
    'recovery-codes.generated',
    z.object({ count: checked(z.int(), z.positive()) }),
  ),
  /**
   * A live API key was refused an operation for want of a scope (403): `scope` is the one it lacks,
   * `operation` the method and route pattern (`POST /admin/v1/users`). The actor is the key. Unknown
   * and revoked keys (401) are not recorded: anyone can send those.
   */
  'api-key.denied': event('api-key.denied', z.object({ scope: z.string(), operation: z.string() })),
  /** An administrator required (or stopped requiring) a second factor of a user. */
  'mfa.required': event('mfa.required', z.object({ required: z.boolean() })),
  /** A browser session ended (logout); `grantsRevoked` counts the grants its ending revoked. */
  'sign-out': event('sign-out', z.object({ grantsRevoked: checked(z.int(), z.nonnegative()) })),
  /**
   * A user consented to a client's scopes and to the resources (cluster audiences, APIs) its grant
   * will cover; `resources` is absent from events recorded before idgate recorded them.
   */
  'consent.granted': event('consent.granted', z.object({ scopes: Scopes, resources: Resources })),
  /**
   * An authorization code was issued (the code itself never appears). `grantId` is null: the
   * grant opens when the code is redeemed — the `code.redeemed` of the same `codeId` names it.
   */
  'code.issued': event(
    'code.issued',
    z.object({ codeId: CodeId, grantId: z.nullable(z.string()), scopes: Scopes }),
  ),
  /** An authorization code (`codeId`, as `code.issued` named it) was redeemed for tokens: the grant it became. */
  'code.redeemed': event('code.redeemed', z.object({ codeId: CodeId, grantId: z.string() })),
  /** A used authorization code came back; the grant it opened is revoked (RFC 6749 §4.1.2). */
  'code.replayed': event(
    'code.replayed',
    z.object({ codeId: CodeId, grantId: z.nullable(z.string()), grantRevoked: z.boolean() }),
  ),
  /** Tokens were issued. `jti` is the access token's id (never the token). */
  'token.issued': event(
    'token.issued',
    z.object({
      grantType: z.string(),
      scopes: Scopes,
      audience: z.array(z.string()),
      jti: z.string(),
      grantId: z.nullable(z.string()),
    }),
  ),
  /**
   * A token exchange (RFC 8693) was answered or refused: the trust that matched (null when none
   * did), the subject token's issuer, subject and `jti`, the claims naming a CI run (`repository`,
   * `ref`, `workflow`, `pipeline`, `runId`: those the token had), the cluster asked for, the access
   * token's `jti` and lifetime (null when refused), and the rule that refused it (`reason`).
   */
  'token.exchanged': event(
    'token.exchanged',
    z.object({
      trust: z.nullable(z.string()),
      issuer: z.nullable(z.string()),
      subject: z.nullable(z.string()),
      subjectJti: z.nullable(z.string()),
      run: z.record(z.string(), z.string()),
      cluster: z.nullable(z.string()),
      actor: z.nullable(z.string()),
      jti: z.nullable(z.string()),
      lifetime: z.nullable(z.int()),
      reason: z.nullable(z.string()),
    }),
  ),
  /** A refresh token was used and replaced by a new one. */
  'refresh.rotated': event('refresh.rotated', GrantDetails),
  /** A used refresh token came back: the whole grant was revoked. */
  'refresh.reuse-detected': event(
    'refresh.reuse-detected',
    z.object({ grantId: z.string(), grantRevoked: z.literal(true) }),
  ),
  /**
   * Tokens were revoked: through the revocation endpoint (RFC 7009), by an administrator, or
   * because their user was disabled or deleted. `grantIds` names the grants revoked, `jti` an
   * access token revoked alone.
   */
  'token.revoked': event(
    'token.revoked',
    z.object({
      reason: z.enum(['revocation-endpoint', 'admin', 'user-disabled', 'user-deleted']),
      tokenType: z.enum(['access_token', 'refresh_token', 'grant']),
      grantIds: z.array(z.string()),
      jti: z.nullable(z.string()),
    }),
  ),
  /**
   * A user approved a device authorization (the user code never appears): its scopes and the
   * resources (cluster audiences) its grant covers.
   */
  'device.approved': event('device.approved', z.object({ scopes: Scopes, resources: Resources })),
  /** A user denied a device authorization. */
  'device.denied': event('device.denied', z.object({ scopes: Scopes, resources: Resources })),
  /**
   * A user code typed on the device verification page was refused unread: too many wrong codes
   * from this address (`scope: address`), or from every address together (`scope: all`,
   * `bruteForce.maxWrongUserCodes`).
   */
  'device.locked': event(
    'device.locked',
    z.object({
      scope: z.enum(['address', 'all']),
      /** Seconds until a code is read again. */
      retryAfterSeconds: checked(z.int(), z.positive()),
    }),
  ),
  /**
   * TokenReview decisions of one cluster or API key with one outcome and reason: one decision, or
   * `count` of them between `firstAt` and `occurredAt` when aggregated (see `audit.tokenReview`).
   */
  'token-review.decided': event(
    'token-review.decided',
    z.object({
      cluster: z.nullable(z.string()),
      apiKeyId: z.nullable(z.string()),
      authenticated: z.boolean(),
      /** Why it was denied (`expired`, `revoked`, `audience_mismatch`, …); null when authenticated. */
      reason: z.nullable(z.string()),
      count: checked(z.int(), z.positive()),
      firstAt: Timestamp,
    }),
  ),
  /**
   * An administrator (an API key, or the CLI on the database) changed something. `before` and
   * `after` hold only the fields that changed, and never a secret, hash or password.
   */
  'admin.changed': event(
    'admin.changed',
    z.object({
      objectKind: z.enum([
        'user',
        'group',
        'client',
        'identity-provider',
        'identity',
        'cluster',
        'trust',
        'api-key',
        'session',
        'grant',
      ]),
      objectId: z.string(),
      action: z.enum(['created', 'updated', 'deleted']),
      /** What the change was when more than create/update/delete says: `unlock`, `set-password`, `rotate-secret`, `revoke`, … */
      operation: z.nullable(z.string()),
      before: z.nullable(z.record(z.string(), z.json())),
      after: z.nullable(z.record(z.string(), z.json())),
    }),
  ),
  /** Signing keys rotated: `kid` was created; `retired` lists the keys it replaces. */
  'key.rotated': event(
    'key.rotated',
    z.object({
      kid: z.string(),
      algorithm: z.string(),
      retired: z.array(z.string()),
      /** When the new key starts signing. */
      activeFrom: Timestamp,
      trigger: z.enum(['cli', 'admin', 'automatic']),
    }),
  ),
  /**
   * A signing key was retired at once (incident response, not a rotation): it left JWKS and every
   * token it signed stopped verifying. `created` names the key made in the same step, if any.
   */
  'key.retired': event(
    'key.retired',
    z.object({
      kid: z.string(),
      algorithm: z.string(),
      created: z.nullable(z.string()),
      trigger: z.enum(['cli', 'admin']),
    }),
  ),
  /**
   * Everything of a scope issued before `notBefore` was revoked (Keycloak's not-before): every
   * token (`global`), a client's (`subject` null, `clientId` names it) or a user's (`subject`).
   */
  'tokens.revoked-before': event(
    'tokens.revoked-before',
    z.object({
      scope: z.enum(['global', 'client', 'user']),
      notBefore: Timestamp,
      /** The instant in force after the change (a later one set before stays). */
      inForce: Timestamp,
    }),
  ),
  /**
   * An administrator lifted the block of source addresses: one address (`all` false, `addresses`
   * names it, blocked or not), or every address (`all` true, `addresses` those that were blocked).
   * The addresses are personal data.
   */
  'address.unblocked': event(
    'address.unblocked',
    z.object({ all: z.boolean(), addresses: z.array(z.string()) }),
  ),
  /** A sign-in at an upstream identity provider came back (a callback, an LDAP bind). */
  'upstream.sign-in': event(
    'upstream.sign-in',
    z.object({
      provider: z.string(),
      reason: z.nullable(z.string()),
      /** Whether the upstream's second factor was trusted (see `sign-in.succeeded`); absent for LDAP. */
      upstreamMfaTrusted: z.optional(z.boolean()),
    }),
  ),
  /** A grant's upstream identity was checked again (on refresh); a failure revokes the grant. */
  'upstream.revalidated': event(
    'upstream.revalidated',
    z.object({ provider: z.string(), grantId: z.string(), reason: z.nullable(z.string()) }),
  ),
} as const;

/**
 * Every audit event type, in a stable order.
 * @example AUDIT_EVENT_TYPES.includes('sign-in.failed') // true
 */
export const AUDIT_EVENT_TYPES = Object.keys(AUDIT_EVENT_SCHEMAS) as (keyof typeof AUDIT_EVENT_SCHEMAS)[];

/**
 * An audit event type name (dotted).
 * @example AuditEventType.parse('token.issued')
 */
export const AuditEventType = z.enum(AUDIT_EVENT_TYPES as [AuditEventTypeName, ...AuditEventTypeName[]]);
type AuditEventTypeName = keyof typeof AUDIT_EVENT_SCHEMAS;
export type AuditEventType = AuditEventTypeName;

/**
 * One audit event: the envelope (`id`, `type`, `occurredAt`, `actor`, `subject`, `clientId`,
 * `address`, `userAgent`, `requestId`, `traceId`, `outcome`) and the type's closed `details`.
 * @example
 * AuditEvent.parse({ id: '01JD0000000000000000000000', type: 'sign-out', occurredAt: '2026-01-01T00:00:00.000Z',
 *   actor: { kind: 'user', id: 'u1' }, subject: 'u1', clientId: null, address: null, userAgent: null,
 *   requestId: null, traceId: null, outcome: 'success', details: { grantsRevoked: 0 } })
 */
export const AuditEvent = z.discriminatedUnion(
  'type',
  Object.values(AUDIT_EVENT_SCHEMAS) as unknown as [
    (typeof AUDIT_EVENT_SCHEMAS)[AuditEventTypeName],
    ...(typeof AUDIT_EVENT_SCHEMAS)[AuditEventTypeName][],
  ],
);
export type AuditEvent = z.infer<typeof AuditEvent>;

/**
 * The audit event of one type.
 * @example const e: AuditEventOf<'token.issued'> = …; e.details.jti
 */
export type AuditEventOf<T extends AuditEventType> = Extract<AuditEvent, { type: T }>;

/**
 * One page of audit events, oldest first, and the cursor of the next.
 * @example AuditEventPage.parse({ items: [], nextCursor: null })
 */
export const AuditEventPage = pageOf(AuditEvent);
export type AuditEventPage = z.infer<typeof AuditEventPage>;

const repeatable = <T extends z.ZodMiniType>(item: T) =>
  z.pipe(
    z.transform((value: unknown) => (value === undefined || Array.isArray(value) ? value : [value])),
    z.array(item),
  );

/**
 * The query of an audit listing: `user` (a user id), `type` (repeatable: any of them), `since`
 * and `until` (ISO instants, `since` inclusive, `until` exclusive), and a page (see {@link PageQuery}).
 * @example AuditEventQuery.parse({ type: ['sign-in.failed', 'sign-in.locked'], since: '2026-01-01T00:00:00Z', limit: '50' })
 */
export const AuditEventQuery = z.extend(PageQuery, {
  user: z.optional(
    checked(
      z.string(),
      z.minLength(1, 'must not be empty'),
      z.maxLength(128, 'must be at most 128 characters'),
    ),
  ),
  type: z.optional(repeatable(AuditEventType)),
  since: z.optional(Timestamp),
  until: z.optional(Timestamp),
});
export type AuditEventQuery = z.infer<typeof AuditEventQuery>;
