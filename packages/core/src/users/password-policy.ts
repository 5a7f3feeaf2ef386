import { AdminError } from '../admin/errors.js';
import { COMMON_PASSWORDS } from './common-passwords.js';

/**
 * What a new password must be (NIST SP 800-63B §5.1.1.2): long enough, not too long to hash, not
 * one of the most common passwords, not the username. No composition rules (§5.1.1.2 says not to
 * impose them) and no expiry.
 */
export interface PasswordPolicy {
  /** The fewest characters (Unicode code points) a password may have. */
  readonly minLength: number;
}

/** The longest password accepted, in characters: long enough for any passphrase, short enough to hash. */
export const MAX_PASSWORD_LENGTH = 256;

/** At least 12 characters: the server's default (`passwordPolicy.minLength`). */
export const DEFAULT_PASSWORD_POLICY: PasswordPolicy = { minLength: 12 };

const COMMON = new Set(COMMON_PASSWORDS);

/**
 * Why `password` may not be `username`'s new password, or undefined when it may.
 * @example passwordWeakness('password123!', 'alice', DEFAULT_PASSWORD_POLICY) // 'is one of the most common passwords'
 */
export function passwordWeakness(
  password: string,
  username: string,
  policy: PasswordPolicy = DEFAULT_PASSWORD_POLICY,
): string | undefined {
  // SP 800-63B §5.1.1.2: each Unicode code point counts as one character.
  const length = [...password].length;
  if (length < policy.minLength) return `must be at least ${policy.minLength} characters long`;
  if (length > MAX_PASSWORD_LENGTH) return `must be at most ${MAX_PASSWORD_LENGTH} characters long`;
  const folded = password.toLowerCase();
  if (COMMON.has(folded)) return 'is one of the most common passwords';
  const name = username.toLowerCase();
  // A name of one or two characters is in too many good passwords to refuse them all.
  if (folded === name || (name.length >= 3 && folded.includes(name))) return 'must not contain the username';
  return undefined;
}

/**
 * Checks a password someone chose for `username` against the policy; generated passwords pass
 * by construction.
 * @throws AdminError `invalid_input` (problem `weak_password`) saying why it is refused.
 * @example checkPasswordPolicy('correct horse battery staple', 'alice', { minLength: 12 });
 */
export function checkPasswordPolicy(
  password: string,
  username: string,
  policy: PasswordPolicy = DEFAULT_PASSWORD_POLICY,
): void {
  const weakness = passwordWeakness(password, username, policy);
  if (weakness !== undefined)
    throw new AdminError('invalid_input', 'user', `password ${weakness}`, {
      key: username,
      problem: 'weak_password',
    });
}
