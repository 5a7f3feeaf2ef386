import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { utf8 } from '../internal/encoding.js';
import { type Random, webCryptoRandom } from '../ports/runtime.js';
import { base32Encode } from './totp.js';

/** How many recovery codes a set holds. */
export const RECOVERY_CODE_COUNT = 10;

/**
 * A recovery code as typed: upper-case, without spaces or dashes (people copy them either way).
 * @example normalizeRecoveryCode('abcd-efgh-ijkl-mnop') // 'ABCDEFGHIJKLMNOP'
 */
export function normalizeRecoveryCode(typed: string): string {
  return typed.replace(/[\s-]/g, '').toUpperCase();
}

/**
 * The stored form of a recovery code: SHA-256 (hex) of its normalised text. A code holds 80
 * random bits, so a fast hash is as good as a slow one against a stolen table.
 * @example recoveryCodeHash('ABCD-EFGH-IJKL-MNOP')
 */
export function recoveryCodeHash(code: string): string {
  return bytesToHex(sha256(utf8(normalizeRecoveryCode(code))));
}

/**
 * A fresh set of {@link RECOVERY_CODE_COUNT} codes, each 16 base32 characters (80 bits) shown in
 * four groups of four.
 * @example const codes = newRecoveryCodes(); // ['7K2M-…', …]
 */
export function newRecoveryCodes(random: Random = webCryptoRandom): string[] {
  return Array.from(
    { length: RECOVERY_CODE_COUNT },
    () => base32Encode(random.bytes(10)).match(/.{4}/g)?.join('-') as string,
  );
}
