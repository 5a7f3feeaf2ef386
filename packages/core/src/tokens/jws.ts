import type { SigningAlgorithm } from '@idgate/schema';
import { base64url, fromBase64url, utf8 } from '../internal/encoding.js';
import type { ActiveSigningKey, KeyRing } from '../keys/key-ring.js';
import { SIGNING_ALGORITHMS } from '../keys/signing-key.js';

/** A protected header as idgate writes it. */
export interface JwsHeader {
  alg: SigningAlgorithm;
  kid: string;
  typ: string;
}

/**
 * Signs `payload` as a compact JWS (RFC 7515 §7.1) with the ring's active key: the header is
 * `{alg, kid, typ}` of that key. Built here, not by jose's CompactSign, which signs only through
 * Web Crypto: the ring's `JwsCrypto` may sign faster (see the server's node:crypto one); the
 * bytes are jose's all the same (a test compares them).
 * @example const jwt = await signCompactJws(ring.signer, 'at+jwt', { sub: 'alice' });
 */
export async function signCompactJws(
  signer: ActiveSigningKey,
  typ: string,
  payload: Record<string, unknown>,
): Promise<string> {
  const header: JwsHeader = { alg: signer.alg, kid: signer.kid, typ };
  const input = `${base64url(utf8(JSON.stringify(header)))}.${base64url(utf8(JSON.stringify(payload)))}`;
  return `${input}.${base64url(await signer.sign(utf8(input)))}`;
}

/** Why a compact JWS did not verify. */
export type JwsRejection = 'malformed' | 'unknown_key' | 'bad_signature' | 'algorithm_not_allowed';

/** The outcome of {@link verifyCompactJws}: the decoded header and payload, or why not. */
export type JwsVerification<Precheck extends string = never> =
  | { ok: true; header: Record<string, unknown>; payload: Record<string, unknown> }
  | { ok: false; reason: JwsRejection | Precheck };

/** Options of {@link verifyCompactJws}. */
export interface VerifyCompactJwsOptions<Precheck extends string> {
  /**
   * Sees the decoded header and payload before the signature is checked: a reason it returns
   * refuses the token without spending a signature verification on it (an expired token, say,
   * is refused whoever signed it). It must only ever refuse.
   */
  precheck?: (header: Record<string, unknown>, payload: Record<string, unknown>) => Precheck | undefined;
}

const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;
const decoder = new TextDecoder('utf-8', { fatal: true });

function decodeJson(segment: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(decoder.decode(fromBase64url(segment)));
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

// RFC 7515 §4.1.11: every extension `crit` lists must be understood, or the JWS refused. idgate
// understands one, b64 (RFC 7797 §6), and only as true: a JWT's payload is base64url-encoded (RFC
// 7519 §7.2). A b64 outside `crit` is ignored, as every parameter not understood is (RFC 7515 §4).
function hasUnmetCriticalExtension(header: Record<string, unknown>): boolean {
  const { crit } = header;
  if (crit === undefined) return false;
  if (!Array.isArray(crit) || crit.length === 0) return true;
  return crit.some((name) => name !== 'b64' || header.b64 !== true);
}

function reject<R extends string>(reason: R): { ok: false; reason: R } {
  return { ok: false, reason };
}

/**
 * Verifies a compact JWS against the ring's published keys, in the order RFC 7515 §5.2 asks:
 * three base64url segments; a JSON object header whose `crit` lists no extension but `b64: true`
 * (RFC 7797); an `alg` idgate signs with (never `none` or an HMAC); a `kid` the ring knows,
 * whose algorithm is the header's; a JSON object payload; the `precheck`, if any; then the
 * signature. Never throws for a bad token: the reason is in the result.
 * @example const checked = await verifyCompactJws(ring, token); if (checked.ok) use(checked.payload);
 */
export async function verifyCompactJws<Precheck extends string = never>(
  ring: KeyRing,
  token: string,
  options: VerifyCompactJwsOptions<Precheck> = {},
): Promise<JwsVerification<Precheck>> {
  if (!COMPACT_JWS.test(token)) return reject('malformed');
  const firstDot = token.indexOf('.');
  const lastDot = token.lastIndexOf('.');
  const header = decodeJson(token.slice(0, firstDot));
  if (header === undefined || hasUnmetCriticalExtension(header)) return reject('malformed');
  const { alg, kid } = header;
  if (typeof alg !== 'string') return reject('malformed');
  if (!(SIGNING_ALGORITHMS as readonly string[]).includes(alg)) return reject('algorithm_not_allowed');
  const key = typeof kid === 'string' ? ring.verificationKey(kid) : undefined;
  if (key === undefined) return reject('unknown_key');
  if (key.alg !== alg) return reject('bad_signature');
  const payload = decodeJson(token.slice(firstDot + 1, lastDot));
  if (payload === undefined) return reject('malformed');
  const refused = options.precheck?.(header, payload);
  if (refused !== undefined) return reject(refused);
  let signature: Uint8Array;
  try {
    signature = fromBase64url(token.slice(lastDot + 1));
  } catch {
    return reject('malformed');
  }
  if (signature.length === 0 || !(await key.verify(utf8(token.slice(0, lastDot)), signature))) {
    return reject('bad_signature');
  }
  return { ok: true, header, payload };
}
