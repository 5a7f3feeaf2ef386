import { createHash } from 'node:crypto';
import { type ExternalIdentity, StorageConflictError, type UserRecord } from '@idgate/core';
import type { Services } from '../services.js';
import type { ResolvedProvider } from './registry.js';

/** The outcome of mapping an external identity to a local user. */
export type MappingResult =
  | { ok: true; user: UserRecord; created: boolean }
  | { ok: false; reason: 'not_linked' | 'disabled' };

/**
 * A username from what the provider calls the user: lower-cased, characters a username may not
 * hold turned into `-`, at most 100 characters, starting with a letter or digit.
 */
export function normalizeUsername(raw: string): string {
  const cleaned = raw
    .toLowerCase()
    .replace(/[^a-z0-9._@-]+/g, '-')
    .replace(/^[^a-z0-9]+/, '')
    .slice(0, 100);
  return cleaned === '' ? 'user' : cleaned;
}

/** Upstream groups as stored: prefixed, distinct, sorted, never a Kubernetes `system:` group. */
export function providerGroups(identity: ExternalIdentity, provider: ResolvedProvider): string[] {
  const groups = identity.groups
    .map((group) => `${provider.groupsPrefix}${group}`)
    .filter((group) => group.length <= 256 && !group.startsWith('system:') && /^[\x21-\x7e]+$/.test(group));
  return [...new Set(groups)].sort();
}

/**
 * Maps an external identity to a local user by the provider's mapping method and records the
 * sign-in (username, email and groups as the provider gave them this time).
 * - An identity already linked signs in as its user (unless that user is disabled).
 * - `auto` creates a user on first sign-in. Its username comes from the provider; when another
 *   user has it, a suffix derived from provider and subject is added, so the same identity always
 *   gets the same name.
 * - `lookup` (and `auto`) with `linkByVerifiedEmail` link to the one user with that email when the
 *   provider verified it.
 * - `manual` signs in only identities an administrator linked.
 */
export async function mapIdentity(
  identity: ExternalIdentity,
  provider: ResolvedProvider,
  services: Services,
): Promise<MappingResult> {
  const { storage, clock } = services;
  const name = provider.config.name;
  const now = new Date(clock.now());
  const groups = providerGroups(identity, provider);
  const signIn = { username: identity.username, email: identity.email, groups, at: now };

  const linked = await storage.identities.find(name, identity.subject);
  if (linked !== undefined) {
    const user = await storage.users.findById(linked.userId);
    if (user === undefined) return { ok: false, reason: 'not_linked' };
    if (user.disabled) return { ok: false, reason: 'disabled' };
    await storage.identities.recordSignIn(name, identity.subject, signIn);
    return { ok: true, user, created: false };
  }
  if (provider.config.mapping === 'manual') return { ok: false, reason: 'not_linked' };

  let user: UserRecord | undefined;
  let created = false;
  if (provider.config.linkByVerifiedEmail && identity.emailVerified && identity.email !== null) {
    const email = identity.email.toLowerCase();
    const matches = (await storage.users.list()).filter(
      (candidate) => candidate.email?.toLowerCase() === email,
    );
    if (matches.length === 1) user = matches[0];
  }
  if (user === undefined) {
    if (provider.config.mapping !== 'auto') return { ok: false, reason: 'not_linked' };
    user = await createUser(identity, provider, services, now);
    created = true;
  }
  if (user.disabled) return { ok: false, reason: 'disabled' };
  try {
    await storage.identities.link({
      provider: name,
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

async function createUser(
  identity: ExternalIdentity,
  provider: ResolvedProvider,
  services: Services,
  now: Date,
): Promise<UserRecord> {
  const base = normalizeUsername(identity.username);
  const digest = createHash('sha256').update(`${provider.config.name}\0${identity.subject}`).digest('hex');
  const candidates = [base, `${base}-${digest.slice(0, 6)}`, `${base}-${digest.slice(0, 12)}`];
  for (const username of candidates) {
    try {
      return await services.storage.users.create({
        id: crypto.randomUUID(),
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
  throw new Error(`no free username for ${provider.config.name} identity`);
}
