import { sha256 as sha256Bytes } from '@noble/hashes/sha2.js';
import { base64url as joseBase64url } from 'jose';

const encoder = new TextEncoder();

/** Unpadded base64url (RFC 4648 §5), as jose writes JWS segments. */
export function base64url(bytes: Uint8Array): string {
  return joseBase64url.encode(bytes);
}

const BASE64URL_TEXT = /^[A-Za-z0-9_-]*$/;

/**
 * Whether `text` is unpadded base64url that {@link fromBase64url} decodes: its alphabet, and no
 * length one character over a multiple of 4 (which no encoder writes).
 */
export function isBase64url(text: string): boolean {
  return BASE64URL_TEXT.test(text) && text.length % 4 !== 1;
}

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

/**
 * base64url of SHA-256 over the UTF-8 text. Computed in JavaScript (audited @noble/hashes) rather
 * than by `crypto.subtle.digest`: for the short secrets hashed here, Web Crypto's asynchronous job
 * costs far more than the hash itself, and this runs on every token request.
 */
export function sha256(text: string): Promise<string> {
  return Promise.resolve(base64url(sha256Bytes(utf8(text))));
}
