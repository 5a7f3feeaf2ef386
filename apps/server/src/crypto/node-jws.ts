import { createPrivateKey, createPublicKey, type KeyObject, sign, verify } from 'node:crypto';
import type { JwsCrypto, JwsSignFunction, JwsVerifyFunction } from '@idgate/core';
import type { SigningAlgorithm } from '@idgate/schema';

// What node:crypto's sign/verify take for each JWS algorithm: the digest (null for Ed25519,
// which hashes internally) and, for ECDSA, the raw r‖s encoding JWS uses instead of DER.
const DIGEST: Record<SigningAlgorithm, string | null> = { RS256: 'sha256', ES256: 'sha256', EdDSA: null };

function keyInput(key: KeyObject, alg: SigningAlgorithm) {
  return alg === 'ES256' ? { key, dsaEncoding: 'ieee-p1363' as const } : key;
}

/**
 * {@link JwsCrypto} over node:crypto. Verification is synchronous: an RS256 check takes tens of
 * microseconds, less than a trip through the thread pool that Web Crypto makes. ES256 and EdDSA
 * signatures are synchronous for the same reason; RS256 signatures (a few hundred microseconds
 * each) go to the thread pool so they do not hold up the event loop.
 * @example await KeyRing.load(records, secret, new Date(), { jwsCrypto: nodeJws });
 */
export const nodeJws: JwsCrypto = {
  // Synchronous ES256/EdDSA signing beats jose's CompactSign over Web Crypto by 14–19 µs of CPU per
  // token (46 against 65 µs, 52 against 66; RS256 ties at ~400): 4–8 % of such an issuance.
  async signer(privateJwk, alg): Promise<JwsSignFunction> {
    const key = keyInput(createPrivateKey({ key: privateJwk, format: 'jwk' }), alg);
    const digest = DIGEST[alg];
    if (alg === 'RS256') {
      return (data) =>
        new Promise((resolve, reject) => {
          sign(digest, data, key, (error, signature) => (error ? reject(error) : resolve(signature)));
        });
    }
    return (data) => sign(digest, data, key);
  },
  async verifier(publicJwk, alg): Promise<JwsVerifyFunction> {
    const key = keyInput(createPublicKey({ key: publicJwk, format: 'jwk' }), alg);
    const digest = DIGEST[alg];
    return (data, signature) => {
      try {
        return verify(digest, data, key, signature);
      } catch {
        // A signature of the wrong length for the key, for instance.
        return false;
      }
    };
  },
};

/**
 * {@link nodeJws} whose ES256 checks run on libuv's thread pool (node:crypto's callback form), for
 * the token exchange's subject tokens: an ES256 verification costs about 75 µs, which the event
 * loop then spends on other requests.
 * @example createIdgate({ ...ports, jwsCrypto: offloadedEcJws }, policy);
 */
export const offloadedEcJws: JwsCrypto = {
  signer: nodeJws.signer,
  async verifier(publicJwk, alg): Promise<JwsVerifyFunction> {
    if (alg !== 'ES256') return nodeJws.verifier(publicJwk, alg);
    const key = keyInput(createPublicKey({ key: publicJwk, format: 'jwk' }), alg);
    return (data, signature) =>
      new Promise((resolve) => {
        try {
          verify('sha256', data, key, signature, (error, valid) => resolve(error === null && valid));
        } catch {
          resolve(false);
        }
      });
  },
};
