import { hmac } from '@noble/hashes/hmac.js';
import { sha1 } from '@noble/hashes/legacy.js';

/** RFC 6238 parameters idgate uses: SHA-1, 6 digits, 30-second steps (what every authenticator app reads). */
export const TOTP = { digits: 6, periodSeconds: 30, algorithm: 'SHA1', window: 1 } as const;

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/**
 * RFC 4648 §6 base32 without padding, as `otpauth://` URIs carry secrets.
 * @example base32Encode(new Uint8Array([0x66])) // 'MY'
 */
export function base32Encode(bytes: Uint8Array): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += ALPHABET[(value << (5 - bits)) & 31];
  return out;
}

/**
 * Decodes {@link base32Encode}'s output (case, spaces and padding ignored).
 * @throws Error on a character outside the alphabet.
 * @example base32Decode('MY') // Uint8Array [0x66]
 */
export function base32Decode(text: string): Uint8Array {
  const clean = text.replace(/[\s=]/g, '').toUpperCase();
  const out: number[] = [];
  let bits = 0;
  let value = 0;
  for (const char of clean) {
    const index = ALPHABET.indexOf(char);
    if (index < 0) throw new Error('not a base32 secret');
    value = ((value << 5) | index) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return new Uint8Array(out);
}

/**
 * HOTP (RFC 4226 §5.3) of `counter`: HMAC-SHA-1, dynamic truncation, `TOTP.digits` digits.
 * @example hotp(secret, 1) // '287082' for the RFC 4226 test secret
 */
export function hotp(secret: Uint8Array, counter: number): string {
  const message = new Uint8Array(8);
  const view = new DataView(message.buffer);
  view.setUint32(0, Math.floor(counter / 2 ** 32));
  view.setUint32(4, counter >>> 0);
  const mac = hmac(sha1, secret, message);
  const offset = (mac[mac.length - 1] as number) & 0x0f;
  const binary =
    (((mac[offset] as number) & 0x7f) << 24) |
    ((mac[offset + 1] as number) << 16) |
    ((mac[offset + 2] as number) << 8) |
    (mac[offset + 3] as number);
  return String(binary % 10 ** TOTP.digits).padStart(TOTP.digits, '0');
}

/**
 * The RFC 6238 time step of an instant (ms since the epoch).
 * @example timeStep(59_000) // 1
 */
export function timeStep(nowMs: number): number {
  return Math.floor(nowMs / 1000 / TOTP.periodSeconds);
}

/** Equal strings compared in time that does not depend on where they differ. */
function sameCode(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/**
 * The time step `code` belongs to, within ±`TOTP.window` steps of now (RFC 6238 §5.2), and only
 * a step after `lastUsedStep` (§5.2: a verifier must not accept a code's second use); undefined
 * when it matches none. Every candidate step is computed and compared, so a match takes no less
 * time than a miss.
 * @example const step = matchTotp(secret, '123456', clock.now(), factor.lastUsedStep);
 */
export function matchTotp(
  secret: Uint8Array,
  code: string,
  nowMs: number,
  lastUsedStep: number | null,
): number | undefined {
  const typed = code.replace(/\s/g, '');
  if (!/^\d{6}$/.test(typed)) return undefined;
  const now = timeStep(nowMs);
  let matched: number | undefined;
  for (let step = now - TOTP.window; step <= now + TOTP.window; step++) {
    const fresh = lastUsedStep === null || step > lastUsedStep;
    if (sameCode(hotp(secret, step), typed) && fresh && matched === undefined) matched = step;
  }
  return matched;
}

/**
 * The `otpauth://totp/` URI an authenticator app reads from the QR code (Google Authenticator's
 * key URI format): label `issuer:account`, the base32 secret and the parameters.
 * @example totpUri('idgate', 'alice', 'JBSWY3DPEHPK3PXP')
 */
export function totpUri(issuer: string, account: string, secretBase32: string): string {
  const label = `${encodeURIComponent(issuer)}:${encodeURIComponent(account)}`;
  const query = new URLSearchParams({
    secret: secretBase32,
    issuer,
    algorithm: TOTP.algorithm,
    digits: String(TOTP.digits),
    period: String(TOTP.periodSeconds),
  });
  return `otpauth://totp/${label}?${query.toString()}`;
}
