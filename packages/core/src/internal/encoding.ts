import { sha256 as sha256Bytes } from '@noble/hashes/sha2.js';

const encoder = new TextEncoder();

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

// Every pair of base64url characters, by the 12 bits it encodes: two string concatenations per
// three bytes instead of four.
const BASE64URL_PAIRS: readonly string[] = Array.from(
  { length: 4096 },
  (_, bits) => (BASE64URL[bits >> 6] as string) + (BASE64URL[bits & 63] as string),
);

/**
 * Unpadded base64url (RFC 4648 §5), encoded directly: every hash at rest and every JWS segment
 * goes through here, and `btoa` over a binary string plus three replacements cost twice as much
 * (twice again what the table of pairs costs).
 */
export function base64url(bytes: Uint8Array): string {
  const pairs = BASE64URL_PAIRS;
  const n = bytes.length;
  let out = '';
  let i = 0;
  for (; i + 2 < n; i += 3) {
    const v = ((bytes[i] as number) << 16) | ((bytes[i + 1] as number) << 8) | (bytes[i + 2] as number);
    out += (pairs[v >> 12] as string) + (pairs[v & 4095] as string);
  }
  if (i + 1 === n) {
    out += pairs[(bytes[i] as number) << 4] as string;
  } else if (i + 2 === n) {
    const v = ((bytes[i] as number) << 10) | ((bytes[i + 1] as number) << 2);
    out += (pairs[v >> 6] as string) + (BASE64URL[v & 63] as string);
  }
  return out;
}

// The value of each base64url character by its char code; -1 for every other character.
const BASE64URL_VALUES = new Int8Array(128).fill(-1);
for (let i = 0; i < BASE64URL.length; i++) BASE64URL_VALUES[BASE64URL.charCodeAt(i)] = i;

function base64urlValue(text: string, index: number): number {
  const code = text.charCodeAt(index);
  const value = code < 128 ? (BASE64URL_VALUES[code] as number) : -1;
  if (value < 0) throw new TypeError('not base64url');
  return value;
}

/** Decodes unpadded base64url, directly (every JWS a review checks comes through here). */
export function fromBase64url(text: string): Uint8Array {
  const n = text.length;
  // One character left over holds fewer than 8 bits: no encoder writes that.
  if (n % 4 === 1) throw new TypeError('not base64url');
  const bytes = new Uint8Array((n * 3) >> 2);
  let o = 0;
  let i = 0;
  for (; i + 3 < n; i += 4) {
    const v =
      (base64urlValue(text, i) << 18) |
      (base64urlValue(text, i + 1) << 12) |
      (base64urlValue(text, i + 2) << 6) |
      base64urlValue(text, i + 3);
    bytes[o++] = v >> 16;
    bytes[o++] = (v >> 8) & 255;
    bytes[o++] = v & 255;
  }
  if (n - i === 2) {
    const v = (base64urlValue(text, i) << 18) | (base64urlValue(text, i + 1) << 12);
    bytes[o++] = v >> 16;
  } else if (n - i === 3) {
    const v =
      (base64urlValue(text, i) << 18) |
      (base64urlValue(text, i + 1) << 12) |
      (base64urlValue(text, i + 2) << 6);
    bytes[o++] = v >> 16;
    bytes[o++] = (v >> 8) & 255;
  }
  return bytes;
}

// Up to this length a Uint8Array lives on V8's heap: copying ASCII text into one costs a fifth of
// TextEncoder's call (hashes of tokens, API keys and secrets are of such short text).
const SHORT_TEXT = 64;

/** The UTF-8 bytes of `text`. */
export function utf8(text: string): Uint8Array<ArrayBuffer> {
  const n = text.length;
  if (n > SHORT_TEXT) return encoder.encode(text);
  const bytes = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const code = text.charCodeAt(i);
    if (code > 127) return encoder.encode(text);
    bytes[i] = code;
  }
  return bytes;
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
