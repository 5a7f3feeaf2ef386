import { LIMITS } from '@idgate/schema';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import {
  type AuditEventDraft,
  type AuditEventIds,
  originFields,
  type RequestOrigin,
  recordAuditEvent,
} from '../audit/record.js';
import type { ExternalIdentity } from '../connectors/types.js';
import { utf8 } from '../internal/encoding.js';
import type { UserRecord } from '../model.js';
import type { AuditEventRepository } from '../ports/audit-storage.js';
import type { LinkedIdentityRepository } from '../ports/federation-storage.js';
import type { Clock } from '../ports/runtime.js';
import { type Storage, StorageConflictError, type UserRepository } from '../ports/storage.js';
import type { LoginThrottle } from '../security/login-throttle.js';

/** How an identity provider's identities become local users. */
export interface IdentityMappingPolicy {
  /** The provider's (lower-case) name. */
  provider: string;
  /**
   * `auto` creates a user on first sign-in; `lookup` links only to an existing user (by verified
   * email); `manual` signs in only identities an administrator linked.
   */
  mapping: 'auto' | 'lookup' | 'manual';
  /** Link a first sign-in to the one user whose email the provider verified. */
  linkByVerifiedEmail: boolean;
  /** What goes before each upstream group name. */
  groupsPrefix: string;
  /**
   * The upstream `amr` / `acr` values that count as a second factor (see {@link upstreamAmr});
   * absent or empty: none.
   */
  trustUpstreamMfa?: readonly string[];
  /** Keep the provider's `emailVerified` for tokens' `email_verified` (absent: false). */
  trustEmailVerified?: boolean;
}

/**
 * The `amr` value (RFC 8176 §2 leaves room for values of one's own) that says the person signed
 * in at an upstream identity provider, which vouched for their second factor.
 */
export const FEDERATED_AMR = 'fed';

/**
 * The `amr` of a sign-in through an upstream provider: `['fed', 'mfa']` when the upstream's
 * verified ID token has one of the `trusted` values in its `amr`, or one of them as its `acr`;
 * else null, as every upstream sign-in was before (a single factor, as far as idgate knows).
 * @example upstreamAmr({ ...identity, upstreamAuthentication: { amr: ['pwd', 'mfa'], acr: null } }, ['mfa']) // ['fed', 'mfa']
 */
export function upstreamAmr(
  identity: Pick<ExternalIdentity, 'upstreamAuthentication'>,
  trusted: readonly string[] | undefined,
): string[] | null {
  const said = identity.upstreamAuthentication;
  if (said === undefined || trusted === undefined || trusted.length === 0) return null;
  const vouched =
    said.amr.some((value) => trusted.includes(value)) || (said.acr !== null && trusted.includes(said.acr));
  return vouched ? [FEDERATED_AMR, 'mfa'] : null;
}

/** What mapping an identity reads and writes. */
export interface IdentityMappingContext {
  storage: { users: UserRepository; identities: LinkedIdentityRepository };
  clock: Clock;
  /** The ids of the audit events recorded: the instance's, so they sort as made. */
  auditIds?: AuditEventIds;
  /** A new user id; defaults to a random UUID. */
  newUserId?: () => string;
}

/**
 * The outcome of mapping an external identity to a local user: `groupsDropped` counts the groups
 * the provider reported that were not kept (see {@link upstreamGroups}); a refusal names the user
 * it was about (`userId`, a disabled one), for the audit trail only.
 */
export type IdentityMapping =
  | { ok: true; user: UserRecord; created: boolean; groupsDropped: number }
  | { ok: false; reason: 'not_linked' | 'disabled'; userId?: string };

/**
 * A username from what the provider calls the user: lower-cased, characters a username may not
 * hold turned into `-`, at most 100 characters, starting with a letter or digit.
 * @example normalizeUsername('Alice Smith') // 'alice-smith'
 */
export function normalizeUsername(raw: string): string {
  const cleaned = raw
    .toLowerCase()
    .replace(/[^a-z0-9._@-]+/g, '-')
    .replace(/^[^a-z0-9]+/, '')
    .slice(0, 100);
  return cleaned === '' ? 'user' : cleaned;
}

/**
 * Upstream groups as stored: prefixed, distinct, sorted, never a Kubernetes `system:` group, never
 * a name longer than `LIMITS.groupNameLength` or with other than printable ASCII, and at most
 * `LIMITS.upstreamGroupsPerIdentity` of them — past it the first ones in byte order. `dropped`
 * counts the groups reported that were not kept (duplicates aside).
 * @example upstreamGroups(['dev', 'system:masters'], 'corp:') // { groups: ['corp:dev'], dropped: 1 }
 */
export function upstreamGroups(
  groups: readonly string[],
  prefix: string,
): { groups: string[]; dropped: number } {
  const distinct = [...new Set(groups.map((group) => `${prefix}${group}`))];
  const valid = distinct
    .filter(
      (group) =>
        group.length <= LIMITS.groupNameLength &&
        !group.startsWith('system:') &&
        /^[\x21-\x7e]+$/.test(group),
    )
    .sort();
  const kept = valid.slice(0, LIMITS.upstreamGroupsPerIdentity);
  return { groups: kept, dropped: distinct.length - kept.length };
}

/**
 * Upstream groups as stored (see {@link upstreamGroups}).
 * @example providerGroups(['dev'], 'corp:') // ['corp:dev']
 */
export function providerGroups(groups: readonly string[], prefix: string): string[] {
  return upstreamGroups(groups, prefix).groups;
}

/**
 * What is kept of what a provider says about a person: the username and display name cut to
 * `LIMITS.upstreamNameLength`, an email longer than `LIMITS.upstreamEmailLength` (no valid
 * address is) dropped.
 */
function boundedIdentity(identity: ExternalIdentity): ExternalIdentity {
  const cut = (value: string) =>
    value.length > LIMITS.upstreamNameLength ? value.slice(0, LIMITS.upstreamNameLength) : value;
  const tooLong = identity.email !== null && identity.email.length > LIMITS.upstreamEmailLength;
  return {
    ...identity,
    username: cut(identity.username),
    displayName: identity.displayName === null ? null : cut(identity.displayName),
    email: tooLong ? null : identity.email,
    emailVerified: tooLong ? false : identity.emailVerified,
  };
}

/**
 * Maps an external identity to a local user by the provider's policy and records the sign-in
 * (username, email and groups as the provider gave them this time).
 * - An identity already linked signs in as its user (unless that user is disabled).
 * - `auto` creates a user on first sign-in. Its username comes from the provider; when another
 *   user has it, a suffix derived from provider and subject is added, so the same identity always
 *   gets the same name.
 * - `linkByVerifiedEmail` links a first sign-in to the one user with that email, when the provider
 *   verified it (with several such users, none is chosen).
 * - `manual` signs in only identities an administrator linked.
 * @example const mapped = await mapExternalIdentity(identity, policy, { storage, clock });
 */
export async function mapExternalIdentity(
  reported: ExternalIdentity,
  policy: IdentityMappingPolicy,
  context: IdentityMappingContext,
): Promise<IdentityMapping> {
  const { storage } = context;
  const now = new Date(context.clock.now());
  const identity = boundedIdentity(reported);
  const { groups, dropped: groupsDropped } = upstreamGroups(identity.groups, policy.groupsPrefix);
  // The provider's word that the email is verified, kept only when it is trusted for it.
  const emailVerified =
    policy.trustEmailVerified === true && identity.emailVerified && identity.email !== null;
  const signIn = {
    username: identity.username,
    email: identity.email,
    ...(emailVerified ? { emailVerified: true } : {}),
    groups,
    at: now,
  };

  const linked = await storage.identities.find(policy.provider, identity.subject);
  if (linked !== undefined) {
    const user = await storage.users.findById(linked.userId);
    if (user === undefined) return { ok: false, reason: 'not_linked' };
    if (user.disabled) return { ok: false, reason: 'disabled', userId: user.id };
    await storage.identities.recordSignIn(policy.provider, identity.subject, signIn);
    return { ok: true, user, created: false, groupsDropped };
  }
  if (policy.mapping === 'manual') return { ok: false, reason: 'not_linked' };

  let user: UserRecord | undefined;
  let created = false;
  if (policy.linkByVerifiedEmail && identity.emailVerified && identity.email !== null) {
    const matches = await storage.users.findByEmail(identity.email);
    if (matches.length === 1) user = matches[0];
  }
  if (user === undefined) {
    if (policy.mapping !== 'auto') return { ok: false, reason: 'not_linked' };
    user = await createMappedUser(identity, policy, context, now);
    created = true;
  }
  if (user.disabled) return { ok: false, reason: 'disabled', userId: user.id };
  try {
    await storage.identities.link({
      provider: policy.provider,
      subject: identity.subject,
      userId: user.id,
      ...signIn,
      linkedAt: now,
      lastLoginAt: now,
    });
  } catch (error) {
    // Two first sign-ins of one identity at once: the other one linked it.
    if (!(error instanceof StorageConflictError)) throw error;
  }
  return { ok: true, user, created, groupsDropped };
}

async function createMappedUser(
  identity: ExternalIdentity,
  policy: IdentityMappingPolicy,
  context: IdentityMappingContext,
  now: Date,
): Promise<UserRecord> {
  const base = normalizeUsername(identity.username);
  const digest = bytesToHex(sha256(utf8(`${policy.provider}\0${identity.subject}`)));
  const candidates = [base, `${base}-${digest.slice(0, 6)}`, `${base}-${digest.slice(0, 12)}`];
  for (const username of candidates) {
    try {
      return await context.storage.users.create({
        id: (context.newUserId ?? (() => crypto.randomUUID()))(),
        username,
        email: identity.emailVerified ? identity.email : null,
        displayName: identity.displayName,
        groups: [],
        passwordHash: null,
        createdAt: now,
      });
    } catch (error) {
      if (!(error instanceof StorageConflictError) || error.field !== 'username') throw error;
    }
  }
  throw new Error(`no free username for ${policy.provider} identity`);
}

/**
 * A sign-in through an external provider: maps the identity (see {@link mapExternalIdentity}) and
 * records `upstream.sign-in` and `sign-in.succeeded` / `sign-in.failed` (method `upstream`) in one
 * transaction, so a user or link it creates lands with its events or not at all (a username taken
 * meanwhile is retried inside it: the storage's inserts that may conflict keep the transaction
 * usable). Then it records the attempt for the login records and brute-force counts, as a
 * password sign-in does.
 * `origin` is where the request came from and `forClient` the client the sign-in is for, for
 * the audit events.
 * @example const mapped = await signInWithExternalIdentity(identity, policy, request.ip, context, { userAgent }, clientId);
 */
export async function signInWithExternalIdentity(
  identity: ExternalIdentity,
  policy: IdentityMappingPolicy,
  sourceAddress: string,
  context: Omit<IdentityMappingContext, 'storage'> & {
    storage: Pick<Storage, 'users' | 'identities' | 'auditEvents' | 'transaction'>;
    throttle?: LoginThrottle | undefined;
  },
  origin: RequestOrigin = {},
  forClient: string | null = null,
): Promise<ExternalSignInResult> {
  const amr = upstreamAmr(identity, policy.trustUpstreamMfa);
  const attempt = {
    username: identity.username.slice(0, LIMITS.upstreamNameLength),
    sourceAddress,
    provider: policy.provider,
  };
  const mapped = await context.storage.transaction(async (storage) => {
    const { clock, newUserId } = context;
    const result = await mapExternalIdentity(identity, policy, {
      storage,
      clock,
      ...(newUserId === undefined ? {} : { newUserId }),
    });
    const outcome = result.ok
      ? { userId: result.user.id, reason: null, groupsDropped: result.groupsDropped, amr }
      : { userId: result.userId ?? null, reason: result.reason, groupsDropped: null, amr };
    await recordAuditEvent(
      storage,
      externalSignInEvents(policy.provider, identity.username, outcome, {
        ...origin,
        address: sourceAddress,
        forClient,
      }),
      context.clock,
      context.auditIds,
    );
    return result;
  });
  // After the commit: the throttle writes through its own repository, outside the transaction.
  await context.throttle?.record(
    mapped.ok
      ? { ...attempt, userId: mapped.user.id, success: true, reason: null }
      : { ...attempt, userId: mapped.userId ?? null, success: false, reason: mapped.reason },
  );
  return mapped.ok ? { ...mapped, amr } : mapped;
}

/**
 * What {@link signInWithExternalIdentity} answers: the mapping, and for a sign-in the `amr` its
 * session or grant records (see {@link upstreamAmr}).
 */
export type ExternalSignInResult =
  | (Extract<IdentityMapping, { ok: true }> & { amr: string[] | null })
  | Extract<IdentityMapping, { ok: false }>;

/**
 * Records a sign-in the upstream provider itself refused (its callback answered an `error`, such
 * as `access_denied`): `upstream.sign-in` and `sign-in.failed` (method `upstream`), with the
 * error as the reason. Nobody is known to have signed in, so neither names a user.
 * @example await recordUpstreamRefusal('corp', 'access_denied', { storage, clock }, { address: request.ip, userAgent }, clientId);
 */
export async function recordUpstreamRefusal(
  provider: string,
  reason: string,
  context: { storage: { auditEvents: AuditEventRepository }; clock: Clock; auditIds?: AuditEventIds },
  origin: RequestOrigin = {},
  forClient: string | null = null,
): Promise<void> {
  const events = externalSignInEvents(
    provider,
    null,
    { userId: null, reason, groupsDropped: null, amr: null },
    { ...origin, forClient },
  );
  await recordAuditEvent(context.storage, events, context.clock, context.auditIds);
}

function externalSignInEvents(
  provider: string,
  upstreamUsername: string | null,
  outcome: {
    userId: string | null;
    reason: string | null;
    groupsDropped: number | null;
    amr: string[] | null;
  },
  origin: RequestOrigin & { forClient: string | null },
): AuditEventDraft[] {
  const { userId, reason, groupsDropped } = outcome;
  // Whether the upstream's second factor was taken as idgate's (its `trustUpstreamMfa`).
  const upstreamMfaTrusted = outcome.amr !== null;
  const username =
    upstreamUsername === null ? null : upstreamUsername.slice(0, LIMITS.upstreamNameLength).toLowerCase();
  const ok = reason === null;
  const envelope = {
    // Someone who signed in acts as their user; a refusal names the user only as its subject.
    actor: {
      kind: 'user' as const,
      id: ok ? userId : null,
      ...(username === null ? {} : { name: username }),
    },
    subject: userId,
    clientId: origin.forClient,
    ...originFields(origin),
    outcome: ok ? ('success' as const) : ('failure' as const),
  };
  return [
    { ...envelope, type: 'upstream.sign-in', details: { provider, reason, upstreamMfaTrusted } },
    {
      ...envelope,
      type: ok ? 'sign-in.succeeded' : 'sign-in.failed',
      details: {
        method: 'upstream',
        provider,
        channel: 'browser',
        username,
        reason,
        groupsDropped,
        upstreamMfaTrusted,
      },
    },
  ];
}
