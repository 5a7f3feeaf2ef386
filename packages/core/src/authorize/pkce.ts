import { PkceValue } from '@idgate/schema';
import { base64url, utf8 } from '../internal/encoding.js';
import type { CodeChallengeMethod } from '../model.js';
import { constantTimeEqual } from '../secrets.js';

/**
 * The S256 challenge of a verifier: base64url(SHA-256(ASCII(verifier))) (RFC 7636 §4.2).
 * @example await computeCodeChallenge('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk') // 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM'
 */
export async function computeCodeChallenge(verifier: string): Promise<string> {
  return base64url(new Uint8Array(await crypto.subtle.digest('SHA-256', utf8(verifier))));
}

/**
 * Checks a code_verifier against the challenge of the authorization request (RFC 7636 §4.6),
 * in constant time. A verifier not of RFC 7636's form ({@link PkceValue}, the form the
 * authorization request's `code_challenge` is held to) matches nothing.
 * @example await verifyCodeVerifier(verifier, challenge, 'S256')
 */
export async function verifyCodeVerifier(
  verifier: string,
  challenge: string,
  method: CodeChallengeMethod,
): Promise<boolean> {
  if (!PkceValue.safeParse(verifier).success) return false;
  const derived = method === 'S256' ? await computeCodeChallenge(verifier) : verifier;
  return constantTimeEqual(derived, challenge);
}
