import type { UserRecord } from '../model.js';

/**
 * The claims about a user that the granted scopes release (OIDC Core §5.4): `profile` →
 * name, preferred_username, updated_at; `email` → email, email_verified; `groups` → groups.
 * @example userClaims(user, ['openid', 'email']) // { email: 'a@example.com', email_verified: false }
 */
export function userClaims(user: UserRecord, scope: readonly string[]): Record<string, unknown> {
  const claims: Record<string, unknown> = {};
  if (scope.includes('profile')) {
    claims.preferred_username = user.username;
    if (user.displayName !== null) claims.name = user.displayName;
    claims.updated_at = Math.floor(user.updatedAt.getTime() / 1000);
  }
  if (scope.includes('email') && user.email !== null) {
    claims.email = user.email;
    // idgate sends no verification mail: only a trusted upstream's word makes it verified.
    claims.email_verified = user.emailVerified === true;
  }
  if (scope.includes('groups')) claims.groups = [...user.groups];
  return claims;
}

/**
 * The claims a Kubernetes cluster maps a user from without calling back, put into access tokens
 * whose audience is a cluster's: `preferred_username`, `groups` (the groups TokenReview reports:
 * the user's own and their identities' prefixed ones, sorted, distinct) and, when the `email`
 * scope was granted, `email` and `email_verified`.
 * @example clusterClaims(user, ['openid', 'email']) // { preferred_username: 'alice', groups: ['dev'], email: 'a@example.com', email_verified: false }
 */
export function clusterClaims(user: UserRecord, scope: readonly string[]): Record<string, unknown> {
  const claims: Record<string, unknown> = {
    preferred_username: user.username,
    groups: [...new Set(user.groups)].sort(),
  };
  if (scope.includes('email') && user.email !== null) {
    claims.email = user.email;
    claims.email_verified = user.emailVerified === true;
  }
  return claims;
}
