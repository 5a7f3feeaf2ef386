import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { type AuditEventDraft, type AuditEventIds, recordAuditEvent } from '../audit/record.js';
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

/** The outcome of mapping an external identity to a local user. */
export type IdentityMapping =
  | { ok: true; user: UserRecord; created: boolean }
  | { ok: false; reason: 'not_linked' | 'disabled' };

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
 * Upstream groups as stored: prefixed, distinct, sorted, never a Kubernetes `system:` group.
 * @example providerGroups(['dev'], 'corp:') // ['corp:dev']
 */
export function providerGroups(groups: readonly string[], prefix: string): string[] {
  const prefixed = groups
    .map((group) => `${prefix}${group}`)
    .filter((group) => group.length <= 256 && !group.startsWith('system:') && /^[\x21-\x7e]+$/.test(group));
  return [...new Set(prefixed)].sort();
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
  identity: ExternalIdentity,
  policy: IdentityMappingPolicy,
  context: IdentityMappingContext,
): Promise<IdentityMapping> {
  const { storage } = context;
  const now = new Date(context.clock.now());
  const groups = providerGroups(identity.groups, policy.groupsPrefix);
  const signIn = { username: identity.username, email: identity.email, groups, at: now };

  const linked = await storage.identities.find(policy.provider, identity.subject);
  if (linked !== undefined) {
    const user = await storage.users.findById(linked.userId);
    if (user === undefined) return { ok: false, reason: 'not_linked' };
    if (user.disabled) return { ok: false, reason: 'disabled' };
    await storage.identities.recordSignIn(policy.provider, identity.subject, signIn);
    return { ok: true, user, created: false };
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
  if (user.disabled) return { ok: false, reason: 'disabled' };
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
  return { ok: true, user, created };
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
 * @example const mapped = await signInWithExternalIdentity(identity, policy, request.ip, context, { userAgent });
 */
export async function signInWithExternalIdentity(
  identity: ExternalIdentity,
  policy: IdentityMappingPolicy,
  sourceAddress: string,
  context: Omit<IdentityMappingContext, 'storage'> & {
    storage: Pick<Storage, 'users' | 'identities' | 'auditEvents' | 'transaction'>;
    throttle?: LoginThrottle | undefined;
  },
  origin: { userAgent?: string | null | undefined } = {},
): Promise<IdentityMapping> {
  const attempt = { username: identity.username.slice(0, 256), sourceAddress, provider: policy.provider };
  const mapped = await context.storage.transaction(async (storage) => {
    const { clock, newUserId } = context;
    const result = await mapExternalIdentity(identity, policy, {
      storage,
      clock,
      ...(newUserId === undefined ? {} : { newUserId }),
    });
    const outcome = result.ok
      ? { userId: result.user.id, reason: null }
      : { userId: null, reason: result.reason };
    await recordAuditEvent(
      storage,
      externalSignInEvents(policy.provider, identity.username, outcome, sourceAddress, origin),
      context.clock,
      context.auditIds,
    );
    return result;
  });
  // After the commit: the throttle writes through its own repository, outside the transaction.
  await context.throttle?.record(
    mapped.ok
      ? { ...attempt, userId: mapped.user.id, success: true, reason: null }
      : { ...attempt, userId: null, success: false, reason: mapped.reason },
  );
  return mapped;
}

/**
 * Records a sign-in the upstream provider itself refused (its callback answered an `error`, such
 * as `access_denied`): `upstream.sign-in` and `sign-in.failed` (method `upstream`), with the
 * error as the reason. Nobody is known to have signed in, so neither names a user.
 * @example await recordUpstreamRefusal('corp', 'access_denied', request.ip, { storage, clock }, { userAgent });
 */
export async function recordUpstreamRefusal(
  provider: string,
  reason: string,
  sourceAddress: string,
  context: { storage: { auditEvents: AuditEventRepository }; clock: Clock; auditIds?: AuditEventIds },
  origin: { userAgent?: string | null | undefined } = {},
): Promise<void> {
  const events = externalSignInEvents(provider, null, { userId: null, reason }, sourceAddress, origin);
  await recordAuditEvent(context.storage, events, context.clock, context.auditIds);
}

function externalSignInEvents(
  provider: string,
  upstreamUsername: string | null,
  outcome: { userId: string | null; reason: string | null },
  sourceAddress: string,
  origin: { userAgent?: string | null | undefined },
): AuditEventDraft[] {
  const { userId, reason } = outcome;
  const username = upstreamUsername === null ? null : upstreamUsername.slice(0, 256).toLowerCase();
  const ok = reason === null;
  const envelope = {
    actor: { kind: 'user' as const, id: userId, ...(username === null ? {} : { name: username }) },
    subject: userId,
    address: sourceAddress,
    userAgent: origin.userAgent ?? null,
    outcome: ok ? ('success' as const) : ('failure' as const),
  };
  return [
    { ...envelope, type: 'upstream.sign-in', details: { provider, reason } },
    {
      ...envelope,
      type: ok ? 'sign-in.succeeded' : 'sign-in.failed',
      details: { method: 'upstream', provider, channel: 'browser', username, reason },
    },
  ];
}
