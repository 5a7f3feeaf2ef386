import { type Random, webCryptoRandom } from '../ports/runtime.js';

/**
 * RFC 8628 §6.1: 20 consonants, no vowels (no words), nothing easily confused; 8 of them give
 * 20^8 ≈ 2^34.6 codes, which the per-address rate limit keeps out of reach of guessing.
 */
export const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
/** Characters of a user code, without its dash. */
export const USER_CODE_LENGTH = 8;

const VALID = new RegExp(`^[${USER_CODE_ALPHABET}]{${USER_CODE_LENGTH}}$`);

/**
 * A new user code, normalised (`BCDFGHJK`); {@link formatUserCode} shows it as `BCDF-GHJK`.
 * @example const userCode = generateUserCode();
 */
export function generateUserCode(random: Random = webCryptoRandom): string {
  let code = '';
  while (code.length < USER_CODE_LENGTH) {
    for (const byte of random.bytes(USER_CODE_LENGTH)) {
      // 240 is the largest multiple of 20 below 256: rejecting the rest keeps every letter equally likely.
      if (byte < 240 && code.length < USER_CODE_LENGTH) code += USER_CODE_ALPHABET[byte % 20];
    }
  }
  return code;
}

/**
 * A user code as people read it: two groups of four joined by a dash.
 * @example formatUserCode('BCDFGHJK') // 'BCDF-GHJK'
 */
export function formatUserCode(userCode: string): string {
  return `${userCode.slice(0, 4)}-${userCode.slice(4)}`;
}

/**
 * A user code as typed, normalised (RFC 8628 §6.1: case and dashes do not matter, nor do spaces),
 * or undefined when it cannot be a user code at all.
 * @example normalizeUserCode('bcdf-ghjk') // 'BCDFGHJK'
 */
export function normalizeUserCode(input: string): string | undefined {
  const code = input.toUpperCase().replace(/[\s-]/g, '');
  return VALID.test(code) ? code : undefined;
}
