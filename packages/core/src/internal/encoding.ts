import { sha256 as sha256Bytes } from '@noble/hashes/sha2.js';
import { base64url as joseBase64url } from 'jose';

const encoder = new TextEncoder();

/** Unpadded base64url (RFC 4648 §5), as jose writes JWS segments. */
export function base64url(bytes: Uint8Array): string {
  return joseBase64url.encode(bytes);
}

const BASE64URL_TEXT = /^[A-Za-z0-9_-]*$/;

/**
 * Decodes unpadded base64url. Padding, whitespace and characters of other alphabets are refused
 * (RFC 4648 §3.3 lets an application refuse them; jose's decoder alone would let the first two by).
 * @throws TypeError when `text` is not unpadded base64url.
 */
export function fromBase64url(text: string): Uint8Array {
  if (!BASE64URL_TEXT.test(text)) throw new TypeError('not base64url');
  // jose throws a TypeError too for a length no encoder writes (one character over a multiple of 4).
  return joseBase64url.decode(text);
}

/** The UTF-8 bytes of `text`. */
export function utf8(text: string): Uint8Array<ArrayBuffer> {
  return encoder.encode(text);
}

// Web Crypto's getRandomValues costs about as much for 16 bytes as for 4 KiB (on Node 20 each call
// is a trip of ~7 µs through its bindings; 4 KiB take ~15 µs), and tokens, codes and ids take 12–32
// bytes at a time. So bytes come from a pool filled 4 KiB at a time, as Node's own randomUUID does:
// each byte is handed out once, and zeroed in the pool when it is.
const POOL_SIZE = 4096;
let pool = new Uint8Array(0);
let poolOffset = 0;

/** `length` bytes from the platform's CSPRNG (Web Crypto), never handed out twice. */
export function randomBytes(length: number): Uint8Array<ArrayBuffer> {
  if (length > POOL_SIZE / 8) return crypto.getRandomValues(new Uint8Array(length));
  if (poolOffset + length > pool.length) {
    pool = crypto.getRandomValues(new Uint8Array(POOL_SIZE));
    poolOffset = 0;
  }
  const bytes = pool.slice(poolOffset, poolOffset + length);
  pool.fill(0, poolOffset, poolOffset + length);
  poolOffset += length;
  return bytes;
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
