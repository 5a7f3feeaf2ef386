import { base64url, utf8 } from '../internal/encoding.js';
import type { CodeChallengeMethod } from '../model.js';
import { constantTimeEqual } from '../secrets.js';

// RFC 7636 §4.1/§4.2: 43–128 characters of [A-Z] / [a-z] / [0-9] / "-" / "." / "_" / "~".
const PKCE_VALUE = /^[A-Za-z0-9._~-]{43,128}$/;

/**
 * Whether a code_verifier or code_challenge has the RFC 7636 form.
 * @example isPkceValue('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk') // true
 */
export function isPkceValue(value: string): boolean {
  return PKCE_VALUE.test(value);
}

/**
 * The S256 challenge of a verifier: base64url(SHA-256(ASCII(verifier))) (RFC 7636 §4.2).
 * @example await computeCodeChallenge('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk') // 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM'
 */
export async function computeCodeChallenge(verifier: string): Promise<string> {
  return base64url(new Uint8Array(await crypto.subtle.digest('SHA-256', utf8(verifier))));
}

/**
 * Checks a code_verifier against the challenge of the authorization request (RFC 7636 §4.6),
 * in constant time.
 * @example await verifyCodeVerifier(verifier, challenge, 'S256')
 */
export async function verifyCodeVerifier(
  verifier: string,
  challenge: string,
  method: CodeChallengeMethod,
): Promise<boolean> {
  if (!isPkceValue(verifier)) return false;
  const derived = method === 'S256' ? await computeCodeChallenge(verifier) : verifier;
  return constantTimeEqual(derived, challenge);
}
