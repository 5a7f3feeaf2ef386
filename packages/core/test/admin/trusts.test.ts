import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { testTrust } from '../../src/admin/trusts.js';
import { type JwsCrypto, webCryptoJws } from '../../src/keys/jws-crypto.js';
import { createMemoryStorage } from '../../src/testing.js';
import { manualClock } from '../helpers.js';

const CI = 'https://ci.example.test';

/** Web Crypto's primitives, counting the verify functions made and the checks made with them. */
function counting(): JwsCrypto & { made: number; checks: number } {
  const counted = {
    made: 0,
    checks: 0,
    signer: webCryptoJws.signer,
    async verifier(jwk: Record<string, unknown>, alg: Parameters<JwsCrypto['verifier']>[1]) {
      counted.made++;
      const verify = await webCryptoJws.verifier(jwk, alg);
      return (data: Uint8Array, signature: Uint8Array) => {
        counted.checks++;
        return verify(data, signature);
      };
    },
  };
  return counted;
}

async function setup() {
  const clock = manualClock();
  const storage = createMemoryStorage();
  const { publicKey, privateKey } = await generateKeyPair('ES256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'ci-1' };
  const at = new Date(clock.now());
  await storage.trusts.create({
    name: 'ci',
    issuer: CI,
    audience: 'idgate',
    jwks: { keys: [jwk] },
    discoveryUrl: null,
    condition: null,
    username: 'ci:{sub}',
    groups: [],
    clusters: ['prod'],
    maxTtl: 600,
    createdAt: at,
    updatedAt: at,
  });
  const keys = { keysFor: async () => ({ ok: true as const, keys: [jwk], source: 'inline' as const }) };
  const token = await new SignJWT({ jti: 'job-1' })
    .setProtectedHeader({ alg: 'ES256', kid: 'ci-1' })
    .setIssuer(CI)
    .setAudience('idgate')
    .setSubject('acme')
    .setExpirationTime(Math.floor(clock.now() / 1000) + 300)
    .sign(privateKey);
  return { clock, storage, keys, token };
}

describe('testTrust', () => {
  it('checks the signature with the ports’ primitives, as the token exchange does', async () => {
    const { clock, storage, keys, token } = await setup();
    const first = counting();
    const evaluation = await testTrust({ storage, clock, jwsCrypto: first }, keys, 'ci', { token });
    expect(evaluation).toMatchObject({ matched: true, identity: { username: 'ci:acme' } });
    expect([first.made, first.checks]).toEqual([1, 1]);
    // Other primitives for the same key get verify functions of their own, never the first's.
    const second = counting();
    await testTrust({ storage, clock, jwsCrypto: second }, keys, 'ci', { token });
    expect([first.checks, second.made, second.checks]).toEqual([1, 1, 1]);
    // A tampered signature is refused by them, with the exchange's reason.
    const [head, body, signature = ''] = token.split('.');
    const tampered = `${head}.${body}.${signature.startsWith('A') ? 'B' : 'A'}${signature.slice(1)}`;
    expect(
      await testTrust({ storage, clock, jwsCrypto: second }, keys, 'ci', { token: tampered }),
    ).toMatchObject({
      matched: false,
      rule: 'signature',
    });
    expect(second.checks).toBe(2);
  });

  it('checks with jose when the ports give no primitives, to the same decision', async () => {
    const { clock, storage, keys, token } = await setup();
    expect(await testTrust({ storage, clock }, keys, 'ci', { token })).toMatchObject({
      matched: true,
      identity: { username: 'ci:acme' },
    });
  });
});
