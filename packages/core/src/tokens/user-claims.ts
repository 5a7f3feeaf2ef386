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
    // Emails are typed in by an administrator, not proven by a verification mail.
    claims.email_verified = false;
  }
  if (scope.includes('groups')) claims.groups = [...user.groups];
  return claims;
}
