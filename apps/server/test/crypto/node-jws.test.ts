import { generateSigningKey, KeyRing, openPrivateKey, webCryptoJws } from '@idgate/core';
import type { SigningAlgorithm } from '@idgate/schema';
import { describe, expect, it } from 'vitest';
import { nodeJws } from '../../src/crypto/node-jws.js';

const SECRET = 'node-jws-test-secret-of-at-least-32-chars';
const data = new TextEncoder().encode('eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9');

async function keysFor(alg: SigningAlgorithm) {
  const record = await generateSigningKey(alg, SECRET, new Date());
  const privateJwk = (await openPrivateKey(record.sealedPrivateJwk, SECRET, record.kid)) as Record<
    string,
    unknown
  >;
  return { record, privateJwk, publicJwk: record.publicJwk };
}

describe('node:crypto JWS primitives', () => {
  for (const alg of ['RS256', 'ES256', 'EdDSA'] as const) {
    it(`${alg}: agrees with Web Crypto both ways and refuses tampering`, async () => {
      const { privateJwk, publicJwk } = await keysFor(alg);
      const nodeSign = await nodeJws.signer(privateJwk, alg);
      const webSign = await webCryptoJws.signer(privateJwk, alg);
      const nodeVerify = await nodeJws.verifier(publicJwk, alg);
      const webVerify = await webCryptoJws.verifier(publicJwk, alg);

      const byNode = await nodeSign(data);
      const byWeb = await webSign(data);
      expect(await webVerify(data, byNode)).toBe(true);
      expect(nodeVerify(data, byWeb)).toBe(true);
      expect(nodeVerify(data, byNode)).toBe(true);

      const tampered = Uint8Array.from(byNode);
      tampered[5] = (tampered[5] as number) ^ 1;
      expect(nodeVerify(data, tampered)).toBe(false);
      expect(nodeVerify(new TextEncoder().encode('other'), byNode)).toBe(false);
      // Wrong lengths (truncated, empty, doubled) are a mismatch, never an exception.
      expect(nodeVerify(data, byNode.slice(0, 10))).toBe(false);
      expect(nodeVerify(data, new Uint8Array())).toBe(false);
      expect(nodeVerify(data, new Uint8Array([...byNode, ...byNode]))).toBe(false);
    });
  }

  it('does not verify with another key of the same algorithm', async () => {
    const one = await keysFor('ES256');
    const other = await keysFor('ES256');
    const signature = await (await nodeJws.signer(one.privateJwk, 'ES256'))(data);
    expect((await nodeJws.verifier(other.publicJwk, 'ES256'))(data, signature)).toBe(false);
  });

  it('backs a key ring whose tokens jose-compatible verifiers accept', async () => {
    const { record } = await keysFor('RS256');
    const ring = await KeyRing.load([record], SECRET, new Date(), { jwsCrypto: nodeJws });
    const signature = await ring.signer.sign(data);
    expect(await (ring.verificationKey(record.kid)?.verify(data, signature) ?? false)).toBe(true);
    expect(
      await webCryptoJws.verifier(record.publicJwk, 'RS256').then((verify) => verify(data, signature)),
    ).toBe(true);
  });
});
