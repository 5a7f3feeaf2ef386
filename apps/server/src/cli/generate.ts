import { randomBytes } from 'node:crypto';
import { generateSecret } from '@idgate/core';

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/** A generated password: 144 random bits as 24 base64url characters. */
export function generatePassword(): string {
  return generateSecret(18);
}

/** A client id: `cl_` and 16 base32 characters (80 random bits), URL-safe and easy to spot. */
export function generateClientId(): string {
  // 256 is a multiple of 32, so masking each byte keeps every character equally likely.
  return `cl_${Array.from(randomBytes(16), (byte) => BASE32[byte & 31]).join('')}`;
}
