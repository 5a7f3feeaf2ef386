import { base64url, randomBase32, randomBytes, sha256 } from './internal/encoding.js';

/**
 * A new random secret of 256 bits, base64url (43 characters): client secrets, opaque tokens.
 * @example const secret = generateSecret();
 */
export function generateSecret(bytes = 32): string {
  return base64url(randomBytes(bytes));
}

/**
 * A generated user password: 144 random bits as 24 base64url characters, shown once.
 * @example const password = generatePassword();
 */
export function generatePassword(): string {
  return generateSecret(18);
}

/**
 * A client id: `cl_` and 16 base32 characters (80 random bits), URL-safe and easy to spot.
 * @example generateClientId() // 'cl_k3v8...'
 */
export function generateClientId(): string {
  return `cl_${randomBase32(16)}`;
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
