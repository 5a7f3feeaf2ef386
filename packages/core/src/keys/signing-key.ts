import type { SigningAlgorithm } from '@idgate/schema';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK } from 'jose';
import type { SigningKeyRecord } from '../model.js';
import { sealPrivateKey } from './seal.js';

/** Algorithms idgate signs with; RS256 is the default because OIDC Core §15.1 requires it. */
export const SIGNING_ALGORITHMS: readonly SigningAlgorithm[] = ['RS256', 'ES256', 'EdDSA'];

/**
 * Generates a signing key pair for `alg`, names it by its RFC 7638 thumbprint and seals the
 * private half with `secret`, ready to store.
 * @example const record = await generateSigningKey('ES256', secret, new Date());
 */
export async function generateSigningKey(
  alg: SigningAlgorithm,
  secret: string,
  now: Date,
): Promise<SigningKeyRecord> {
  const { publicKey, privateKey } = await generateKeyPair(alg, {
    extractable: true,
    ...(alg === 'RS256' ? { modulusLength: 2048 } : {}),
    ...(alg === 'EdDSA' ? { crv: 'Ed25519' } : {}),
  });
  const publicJwk = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(publicJwk, 'sha256');
  const published: JWK = { ...publicJwk, kid, alg, use: 'sig' };
  const privateJwk: JWK = { ...(await exportJWK(privateKey)), kid, alg };
  return {
    kid,
    alg,
    publicJwk: published as Record<string, unknown>,
    sealedPrivateJwk: await sealPrivateKey(privateJwk, secret, kid),
    createdAt: now,
    retiredAt: null,
    publishedUntil: null,
  };
}

/** Where a key stands in its rotation at a given instant. */
export type SigningKeyState = 'active' | 'retired' | 'expired';

/**
 * The state of a stored key: `active` until retired, then `retired` (still in JWKS) until
 * `publishedUntil`, then `expired`.
 * @example signingKeyState(record, new Date()) // 'active'
 */
export function signingKeyState(key: SigningKeyRecord, now: Date): SigningKeyState {
  if (key.retiredAt === null) return 'active';
  return key.publishedUntil !== null && key.publishedUntil.getTime() > now.getTime() ? 'retired' : 'expired';
}
