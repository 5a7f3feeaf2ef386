import { sha256 as sha256Bytes } from '@noble/hashes/sha2.js';

const encoder = new TextEncoder();

export function base64url(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i++) binary += String.fromCharCode(bytes[i] as number);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

export function fromBase64url(text: string): Uint8Array {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) throw new TypeError('not base64url');
  const padded = text.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (text.length % 4)) % 4);
  const binary = atob(padded);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

export function utf8(text: string): Uint8Array<ArrayBuffer> {
  return encoder.encode(text);
}

export function randomBytes(length: number): Uint8Array<ArrayBuffer> {
  return crypto.getRandomValues(new Uint8Array(length));
}

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/** `length` random lower-case base32 characters, 5 random bits each: URL-safe and easy to read. */
export function randomBase32(length: number): string {
  // 256 is a multiple of 32, so masking each byte keeps every character equally likely.
  return Array.from(randomBytes(length), (byte) => BASE32[byte & 31]).join('');
}

/**
 * base64url of SHA-256 over the UTF-8 text. Computed in JavaScript (audited @noble/hashes) rather
 * than by `crypto.subtle.digest`: for the short secrets hashed here, Web Crypto's asynchronous job
 * costs far more than the hash itself, and this runs on every token request.
 */
export function sha256(text: string): Promise<string> {
  return Promise.resolve(base64url(sha256Bytes(utf8(text))));
}
