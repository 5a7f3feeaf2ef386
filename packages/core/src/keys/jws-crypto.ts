import type { SigningAlgorithm } from '@idgate/schema';
import { importJWK, type JWK } from 'jose';

/** Signs a JWS signing input (`base64url(header).base64url(payload)` as bytes). */
export type JwsSignFunction = (data: Uint8Array) => Uint8Array | Promise<Uint8Array>;

/** Checks a JWS signature over its signing input; false (never an exception) when it does not match. */
export type JwsVerifyFunction = (data: Uint8Array, signature: Uint8Array) => boolean | Promise<boolean>;

/**
 * The signature primitives behind a {@link KeyRing}: it turns each key, once, into a sign or verify
 * function. The default, {@link webCryptoJws}, is Web Crypto, which every runtime has; a server
 * may pass faster native primitives (in Node.js, `crypto.verify` answers synchronously instead of
 * going through the thread pool).
 * @example const ring = await KeyRing.load(records, secret, new Date(), { jwsCrypto: webCryptoJws });
 */
export interface JwsCrypto {
  signer(privateJwk: Record<string, unknown>, alg: SigningAlgorithm): Promise<JwsSignFunction>;
  verifier(publicJwk: Record<string, unknown>, alg: SigningAlgorithm): Promise<JwsVerifyFunction>;
}

// The JWS algorithms (RFC 7518 §3, RFC 8037) as Web Crypto names them. ECDSA signatures are
// the raw r‖s that JWS uses.
const WEB_CRYPTO_ALGORITHMS: Record<SigningAlgorithm, AlgorithmIdentifier | EcdsaParams> = {
  RS256: { name: 'RSASSA-PKCS1-v1_5' },
  ES256: { name: 'ECDSA', hash: 'SHA-256' },
  EdDSA: { name: 'Ed25519' },
};

async function importKey(jwk: Record<string, unknown>, alg: SigningAlgorithm): Promise<CryptoKey> {
  return (await importJWK(jwk as JWK, alg)) as CryptoKey;
}

/** {@link JwsCrypto} over Web Crypto (`crypto.subtle`). */
export const webCryptoJws: JwsCrypto = {
  async signer(privateJwk, alg) {
    const key = await importKey(privateJwk, alg);
    const params = WEB_CRYPTO_ALGORITHMS[alg];
    return async (data) => new Uint8Array(await crypto.subtle.sign(params, key, data as BufferSource));
  },
  async verifier(publicJwk, alg) {
    const key = await importKey(publicJwk, alg);
    const params = WEB_CRYPTO_ALGORITHMS[alg];
    return (data, signature) =>
      crypto.subtle.verify(params, key, signature as BufferSource, data as BufferSource).catch(() => false);
  },
};
