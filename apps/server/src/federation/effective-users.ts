import type { UserRecord, UserRepository } from '@idgate/core';
import type { Services } from '../services.js';

/**
 * Users as tokens describe them: their own groups plus the groups their linked identities got at
 * their latest sign-in. Used wherever a user is read to answer about a token (token review,
 * userinfo, introspection, ID tokens); never for writes, so provider groups never become the
 * user's own.
 */
export function effectiveUsers(services: Services): UserRepository {
  const { users, identities } = services.storage;
  const withGroups = async (user: UserRecord | undefined): Promise<UserRecord | undefined> => {
    if (user === undefined) return undefined;
    const linked = await identities.listByUser(user.id);
    if (linked.length === 0) return user;
    return {
      ...user,
      groups: [...new Set([...user.groups, ...linked.flatMap((identity) => identity.groups)])].sort(),
    };
  };
  return {
    ...users,
    findById: async (id) => withGroups(await users.findById(id)),
    findByUsername: async (username) => withGroups(await users.findByUsername(username)),
  };
}
