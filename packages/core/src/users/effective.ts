import type { UserRecord } from '../model.js';
import type { LinkedIdentityRepository } from '../ports/federation-storage.js';
import type { Storage, UserRepository } from '../ports/storage.js';

/**
 * `user` with the groups their linked identities got at their latest sign-in added to their own,
 * and `emailVerified` when their email is, exactly, one that a linked identity's provider
 * verified at its latest sign-in and is trusted for (`trustEmailVerified`): an email changed since,
 * by an administrator or the provider, is not verified.
 */
export async function withIdentityGroups(
  user: UserRecord,
  identities: Pick<LinkedIdentityRepository, 'listByUser'>,
): Promise<UserRecord> {
  const linked = await identities.listByUser(user.id);
  if (linked.length === 0) return user;
  const verified =
    user.email !== null &&
    linked.some((identity) => identity.emailVerified === true && identity.email === user.email);
  return {
    ...user,
    groups: [...new Set([...user.groups, ...linked.flatMap((identity) => identity.groups)])].sort(),
    ...(verified ? { emailVerified: true } : {}),
  };
}

/**
 * Users as tokens describe them (see {@link withIdentityGroups}). Used wherever a user is read to
 * answer about a token (ID tokens, the password grant); never for writes, so provider groups never
 * become the user's own.
 */
export function effectiveUsers(storage: Pick<Storage, 'users' | 'identities'>): UserRepository {
  const { users, identities } = storage;
  const withGroups = async (user: UserRecord | undefined) =>
    user === undefined ? undefined : withIdentityGroups(user, identities);
  return {
    ...users,
    findById: async (id) => withGroups(await users.findById(id)),
    findByUsername: async (username) => withGroups(await users.findByUsername(username)),
  };
}
