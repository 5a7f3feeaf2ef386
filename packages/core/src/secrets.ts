import { base64url, sha256 } from './internal/encoding.js';
import { type Random, webCryptoRandom } from './ports/runtime.js';

/**
 * A new random secret of 256 bits, base64url (43 characters): client secrets, opaque tokens.
 * @example const secret = generateSecret(random);
 */
export function generateSecret(random: Random = webCryptoRandom, bytes = 32): string {
  return base64url(random.bytes(bytes));
}

/**
 * A generated user password: 144 random bits as 24 base64url characters, shown once.
 * @example const password = generatePassword(random);
 */
export function generatePassword(random: Random = webCryptoRandom): string {
  return generateSecret(random, 18);
}

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/** `length` random lower-case base32 characters, 5 random bits each: URL-safe and easy to read. */
export function randomBase32(random: Random, length: number): string {
  // 256 is a multiple of 32, so masking each byte keeps every character equally likely.
  return Array.from(random.bytes(length), (byte) => BASE32[byte & 31]).join('');
}

/**
 * A client id: `cl_` and 16 base32 characters (80 random bits), URL-safe and easy to spot.
 * @example generateClientId(random) // 'cl_k3v8...'
 */
export function generateClientId(random: Random = webCryptoRandom): string {
  return `cl_${randomBase32(random, 16)}`;
}

/**
 * The at-rest form of a high-entropy secret (client secret, API key, opaque token): SHA-256,
 * base64url. A fast hash is right here: the input has 256 bits of entropy, so there is nothing to
 * brute-force; user passwords go through the slow {@link PasswordHasher} instead.
 * @example const stored = await hashSecret(secret);
 */
export function hashSecret(secret: string): Promise<string> {
  return sha256(secret);
}

/**
 * Whether `secret` hashes to `storedHash`, compared in constant time.
 * @example if (await verifySecret(presented, client.secretHash)) { ... }
 */
export async function verifySecret(secret: string, storedHash: string): Promise<boolean> {
  return constantTimeEqual(await sha256(secret), storedHash);
}

/**
 * Compares two strings in time that depends only on their lengths, so a secret's hash cannot be
 * guessed byte by byte from response times.
 * @example if (!constantTimeEqual(presentedCsrf, storedCsrf)) refuse();
 */
export function constantTimeEqual(a: string, b: string): boolean {
  const length = Math.max(a.length, b.length);
  let diff = a.length ^ b.length;
  for (let i = 0; i < length; i++) diff |= (a.charCodeAt(i) | 0) ^ (b.charCodeAt(i) | 0);
  return diff === 0;
}
