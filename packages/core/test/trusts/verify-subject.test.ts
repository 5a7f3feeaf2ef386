import { base64url, exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { webCryptoJws } from '../../src/keys/jws-crypto.js';
import type { TrustRecord } from '../../src/model.js';
import { evaluateSubjectToken } from '../../src/trusts/evaluate.js';
import { createTrustKeySource } from '../../src/trusts/keys.js';

const ISSUER = 'https://ci.example';
const NOW = 1_900_000_000;
const clock = { now: () => NOW * 1000 };

function trust(keys: JWK[]): TrustRecord {
  const at = new Date(0);
  return {
    name: 'ci',
    issuer: ISSUER,
    audience: 'idgate',
    jwks: { keys } as TrustRecord['jwks'],
    discoveryUrl: null,
    condition: null,
    username: 'ci:{sub}',
    groups: [],
    clusters: ['prod'],
    maxTtl: 900,
    createdAt: at,
    updatedAt: at,
  };
}

const encode = (value: unknown) => base64url.encode(JSON.stringify(value));

describe('subject tokens verified through a JwsCrypto', () => {
  it('decide every token as jose does: the same acceptances, the same refusals and reasons', async () => {
    const rsa = await generateKeyPair('RS256', { extractable: true });
    const ec = await generateKeyPair('ES256', { extractable: true });
    const other = await generateKeyPair('ES256', { extractable: true });
    // jose makes and uses no RSA key under 2048 bits: Web Crypto makes this one and signs with it.
    const small = (await crypto.subtle.generateKey(
      {
        name: 'RSASSA-PKCS1-v1_5',
        modulusLength: 1024,
        publicExponent: new Uint8Array([1, 0, 1]),
        hash: 'SHA-256',
      },
      true,
      ['sign', 'verify'],
    )) as CryptoKeyPair;
    const rsaJwk = { ...(await exportJWK(rsa.publicKey)), kid: 'r1', alg: 'RS256', use: 'sig' };
    const ecJwk = { ...(await exportJWK(ec.publicKey)), kid: 'e1' };
    const keys: JWK[] = [
      rsaJwk,
      ecJwk,
      { ...(await exportJWK(other.publicKey)), kid: 'twin' },
      { ...(await exportJWK(ec.publicKey)), kid: 'twin' },
      { ...(await exportJWK(small.publicKey)), kid: 'small' },
      { ...(await exportJWK(other.publicKey)), kid: 'enc', use: 'enc' },
      { ...(await exportJWK(other.publicKey)), kid: 'ops', key_ops: ['encrypt'] },
      { ...(await exportJWK(ec.publicKey)), kid: 'es384', alg: 'ES384' },
    ];
    const good = { iss: ISSUER, aud: 'idgate', sub: 'repo:acme/infra', jti: 'j', exp: NOW + 60 };
    const sign = (claims: Record<string, unknown>, header: Record<string, unknown>, key = ec.privateKey) =>
      new SignJWT(claims).setProtectedHeader(header as { alg: string }).sign(key);
    const es = (claims: Record<string, unknown>, kid: string | undefined = 'e1') =>
      sign(claims, kid === undefined ? { alg: 'ES256' } : { alg: 'ES256', kid });
    const valid = await es(good);
    const [h, p] = valid.split('.');
    const tokens: Record<string, string> = {
      'ES256 accepted': valid,
      'RS256 accepted': await sign(good, { alg: 'RS256', kid: 'r1' }, rsa.privateKey),
      'no kid, two EC keys of the curve': await es(good, undefined),
      'aud as an array': await es({ ...good, aud: ['x', 'idgate'] }),
      'nbf and iat in the past': await es({ ...good, nbf: NOW - 10, iat: NOW - 10 }),
      'wrong signature': await es(good, 'twin').then(
        (t) => `${t.split('.').slice(0, 2).join('.')}.${valid.split('.')[2]}`,
      ),
      'payload changed': `${h}.${encode({ ...good, sub: 'repo:evil/x' })}.${valid.split('.')[2]}`,
      'signature not base64url': `${h}.${p}.***`,
      'signature of another length': `${h}.${p}.AAAA`,
      'unknown kid': await es(good, 'nope'),
      'kid of two keys': await es(good, 'twin'),
      'key for encryption': await es(good, 'enc'),
      'key not for verifying': await es(good, 'ops'),
      'key of another alg': await es(good, 'es384'),
      'RSA key under 2048 bits': `${encode({ alg: 'RS256', kid: 'small' })}.${encode(good)}`,
      'RS256 header on an EC key': await sign(good, { alg: 'RS256', kid: 'e1' }, rsa.privateKey),
      expired: await es({ ...good, exp: NOW }),
      'exp not a number': await es({ ...good, exp: String(NOW + 60) }),
      'not yet valid': await es({ ...good, nbf: NOW + 1 }),
      'nbf not a number': await es({ ...good, nbf: 'soon' }),
      'iat not a number': await es({ ...good, iat: null }),
      'iat in the future (allowed)': await es({ ...good, iat: NOW + 600 }),
      'no exp': await es({ ...good, exp: undefined }),
      'no sub': await es({ ...good, sub: undefined }),
      'no jti': await es({ ...good, jti: undefined }),
      'no jti nor sub': await es({ ...good, jti: undefined, sub: undefined }),
      'other issuer in the verified claims': await es({ ...good, iss: `${ISSUER}/` }),
      'aud null': await es({ ...good, aud: null }),
      'payload not an object': `${h}.${encode([1, 2])}`,
      'payload not JSON': `${h}.${base64url.encode('{"a":')}`,
      'payload not UTF-8': `${h}.${base64url.encode(new Uint8Array([0x7b, 0xff, 0x7d]))}`,
      'crit header': `${encode({ alg: 'ES256', kid: 'e1', crit: ['x-ext'], 'x-ext': 1 })}.${encode(good)}`,
      'b64 header': `${encode({ alg: 'ES256', kid: 'e1', b64: true, crit: ['b64'] })}.${encode(good)}`,
    };
    // Tokens written above by hand get a real signature now.
    const signed = async (name: string, key: CryptoKey, params: AlgorithmIdentifier | EcdsaParams) => {
      const input = new TextEncoder().encode(tokens[name]);
      const signature = await crypto.subtle.sign(params, key, input);
      tokens[name] = `${tokens[name]}.${base64url.encode(new Uint8Array(signature))}`;
    };
    for (const name of [
      'payload not an object',
      'payload not JSON',
      'payload not UTF-8',
      'crit header',
      'b64 header',
    ])
      await signed(name, ec.privateKey as CryptoKey, { name: 'ECDSA', hash: 'SHA-256' });
    await signed('RSA key under 2048 bits', small.privateKey, { name: 'RSASSA-PKCS1-v1_5' });
    const trusts = [trust(keys)];
    const keySource = createTrustKeySource({ fetch: globalThis.fetch, clock });
    const outcome = (decision: Awaited<ReturnType<typeof evaluateSubjectToken>>) =>
      decision.ok
        ? { ok: true, sub: decision.claims.sub }
        : { ok: false, rule: decision.rule, reason: decision.reason };
    const seen = new Set<string>();
    for (const [name, token] of Object.entries(tokens)) {
      const jose = outcome(await evaluateSubjectToken(token, trusts, { keys: keySource, clock }));
      const port = outcome(
        await evaluateSubjectToken(token, trusts, { keys: keySource, clock, jws: webCryptoJws }),
      );
      expect({ name, ...port }).toEqual({ name, ...jose });
      seen.add(jose.ok ? 'ok' : (jose as { rule: string }).rule);
    }
    // The cases reach every rule a signature and claims check can give.
    expect([...seen].sort()).toEqual(
      [
        'audience',
        'expired',
        'malformed',
        'missing_claim',
        'not_yet_valid',
        'ok',
        'signature',
        'unknown_key',
        'untrusted_issuer',
      ].sort(),
    );
  });
});
