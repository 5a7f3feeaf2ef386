import type { UserRecord } from '../model.js';
import type { PasswordHasher } from '../ports/runtime.js';

/** Why a username/password pair was refused. */
export type PasswordLoginFailure = 'invalid_credentials' | 'disabled';

/** What a password check needs. */
export interface PasswordLoginContext {
  findUserByUsername(username: string): Promise<UserRecord | undefined>;
  hasher: PasswordHasher;
  /**
   * A valid hash of a throwaway password, verified when the user does not exist so that an
   * unknown username takes as long as a wrong password.
   */
  dummyHash: string;
}

/**
 * Checks a username (any case) and password. A disabled account is reported only after the
 * password proved right, so the answer never tells a stranger that an account exists; `userId`
 * names the account a refusal was about, for the audit trail only, when there is one.
 * @example const result = await verifyUserPassword('alice', 'pw', context);
 */
export async function verifyUserPassword(
  username: string,
  password: string,
  context: PasswordLoginContext,
): Promise<{ ok: true; user: UserRecord } | { ok: false; failure: PasswordLoginFailure; userId?: string }> {
  const user = await context.findUserByUsername(username);
  const hash = user?.passwordHash ?? context.dummyHash;
  const matches = await context.hasher.verify(hash, password);
  if (user === undefined) return { ok: false, failure: 'invalid_credentials' };
  if (user.passwordHash === null || !matches)
    return { ok: false, failure: 'invalid_credentials', userId: user.id };
  if (user.disabled) return { ok: false, failure: 'disabled', userId: user.id };
  return { ok: true, user };
}
