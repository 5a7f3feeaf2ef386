import type { SigningAlgorithm } from '@idgate/schema';
import { sha256, sha512 } from '@noble/hashes/sha2.js';
import { base64url, utf8 } from '../internal/encoding.js';
import type { KeyRing } from '../keys/key-ring.js';
import type { Clock } from '../ports/runtime.js';
import { signCompactJws } from './jws.js';

/** What an ID token asserts. */
export interface IdTokenInput {
  subject: string;
  clientId: string;
  /** Seconds since the epoch. */
  authTime: number;
  grantId: string;
  nonce?: string;
  /** The access token issued alongside, for `at_hash`. */
  accessToken?: string;
  /** Claims released by scope (see `userClaims`). */
  claims: Record<string, unknown>;
  lifetimeSeconds: number;
}

const AT_HASH_DIGEST: Record<SigningAlgorithm, (data: Uint8Array) => Uint8Array> = {
  RS256: sha256,
  ES256: sha256,
  // Ed25519 signs over SHA-512 internally, and OIDC ties at_hash to the signature's hash.
  EdDSA: sha512,
};

/**
 * `at_hash` (OIDC Core §3.1.3.6): base64url of the left half of the hash of the access token,
 * with the hash of the ID token's signing algorithm.
 * @example await accessTokenHash(accessToken, 'RS256')
 */
export async function accessTokenHash(accessToken: string, alg: SigningAlgorithm): Promise<string> {
  const digest = AT_HASH_DIGEST[alg](utf8(accessToken));
  return base64url(digest.slice(0, digest.length / 2));
}

/**
 * Issues an ID token (OIDC Core §2): iss, sub, aud (the client), azp, exp, iat, auth_time, sid,
 * nonce when the request had one, at_hash when an access token comes with it, and the claims.
 * @example const idToken = await issueIdToken(ring, issuer, { subject: user.id, clientId, authTime, grantId, claims: {}, lifetimeSeconds: 3600 }, systemClock);
 */
export async function issueIdToken(
  ring: KeyRing,
  issuer: string,
  input: IdTokenInput,
  clock: Clock,
): Promise<string> {
  const iat = Math.floor(clock.now() / 1000);
  const payload: Record<string, unknown> = {
    ...input.claims,
    iss: issuer,
    sub: input.subject,
    aud: input.clientId,
    azp: input.clientId,
    iat,
    exp: iat + input.lifetimeSeconds,
    auth_time: input.authTime,
    sid: input.grantId,
  };
  if (input.nonce !== undefined) payload.nonce = input.nonce;
  if (input.accessToken !== undefined)
    payload.at_hash = await accessTokenHash(input.accessToken, ring.signer.alg);
  return signCompactJws(ring.signer, 'JWT', payload);
}
