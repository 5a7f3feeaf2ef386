import { createLocalJWKSet, type JSONWebKeySet, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { type JwsCrypto, webCryptoJws } from '../src/keys/jws-crypto.js';
import { KeyRing } from '../src/keys/key-ring.js';
import { generateSigningKey } from '../src/keys/signing-key.js';
import { issueAccessToken, verifyAccessToken } from '../src/tokens/access-token.js';
import { issueIdToken } from '../src/tokens/id-token.js';
import { signCompactJws, verifyCompactJws } from '../src/tokens/jws.js';
import { ISSUER, keyRing, manualClock, SECRET, signRaw } from './helpers.js';

describe('compact JWS (RFC 7515)', () => {
  for (const alg of ['RS256', 'ES256', 'EdDSA'] as const) {
    it(`${alg}: what it signs, jose verifies against the published JWKS, and it verifies itself`, async () => {
      const ring = await keyRing(alg);
      const jwt = await signCompactJws(ring.signer, 'JWT', {
        iss: ISSUER,
        sub: 'alice',
        exp: 4_000_000_000,
      });
      const { payload, protectedHeader } = await jwtVerify(
        jwt,
        createLocalJWKSet(ring.jwks() as JSONWebKeySet),
        { issuer: ISSUER },
      );
      expect(protectedHeader).toEqual({ alg, kid: ring.signer.kid, typ: 'JWT' });
      expect(payload.sub).toBe('alice');
      expect(await verifyCompactJws(ring, jwt)).toMatchObject({ ok: true, payload: { sub: 'alice' } });
    });
  }

  it('refuses headers it must not accept: crit, b64, no alg, alg none, HMAC, an array', async () => {
    const ring = await keyRing('ES256');
    const { kid } = ring.signer;
    const payload = { sub: 'alice' };
    const cases: [unknown, string][] = [
      [{ alg: 'ES256', kid, crit: ['exp'], exp: 1 }, 'malformed'],
      [{ alg: 'ES256', kid, b64: false, crit: ['b64'] }, 'malformed'],
      [{ kid }, 'malformed'],
      [{ alg: 'none', kid }, 'algorithm_not_allowed'],
      [{ alg: 'HS256', kid }, 'algorithm_not_allowed'],
      [[{ alg: 'ES256', kid }], 'malformed'],
      ['null', 'malformed'],
      [{ alg: 'ES256' }, 'unknown_key'],
      [{ alg: 'ES256', kid: 42 }, 'unknown_key'],
      [{ alg: 'RS256', kid }, 'bad_signature'],
    ];
    for (const [header, reason] of cases) {
      expect(
        await verifyCompactJws(ring, await signRaw(ring, header, payload)),
        JSON.stringify(header),
      ).toEqual({
        ok: false,
        reason,
      });
    }
  });

  it('refuses a payload that is not a JSON object even when the signature matches', async () => {
    const ring = await keyRing('ES256');
    const header = { alg: 'ES256', kid: ring.signer.kid };
    for (const payload of ['not json', '[1,2]', '42', 'null']) {
      expect(await verifyCompactJws(ring, await signRaw(ring, header, payload))).toEqual({
        ok: false,
        reason: 'malformed',
      });
    }
  });

  it('refuses empty, truncated and mangled signatures as bad signatures, never as valid', async () => {
    const ring = await keyRing('RS256');
    const jwt = await signCompactJws(ring.signer, 'JWT', { sub: 'alice' });
    const [h, p, s] = jwt.split('.') as [string, string, string];
    expect(await verifyCompactJws(ring, `${h}.${p}.`)).toEqual({ ok: false, reason: 'bad_signature' });
    expect(await verifyCompactJws(ring, `${h}.${p}.${s.slice(0, 40)}`)).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
    expect(await verifyCompactJws(ring, `${h}.${p}.${s.slice(0, -1)}`)).toMatchObject({ ok: false });
    expect(await verifyCompactJws(ring, `${h}.${p}.${s}.${s}`)).toEqual({ ok: false, reason: 'malformed' });
  });
});

describe('access token claims', () => {
  const now = () => Math.floor(Date.parse('2026-11-21T10:00:00Z') / 1000);
  const claims = () => ({
    iss: ISSUER,
    sub: 'u1',
    aud: 'cli',
    client_id: 'cli',
    jti: 'j1',
    iat: now(),
    exp: now() + 60,
  });

  it('accepts typ at+jwt in any case and with the application/ prefix', async () => {
    const ring = await keyRing('ES256');
    for (const typ of ['at+jwt', 'AT+JWT', 'application/at+jwt']) {
      const token = await signRaw(ring, { alg: 'ES256', kid: ring.signer.kid, typ }, claims());
      expect((await verifyAccessToken(ring, ISSUER, token, manualClock())).ok, typ).toBe(true);
    }
  });

  it('names what is wrong with the claims', async () => {
    const ring = await keyRing('ES256');
    const header = { alg: 'ES256', kid: ring.signer.kid, typ: 'at+jwt' };
    const cases: [Record<string, unknown>, string][] = [
      [{ iat: undefined }, 'malformed'],
      [{ exp: '9999999999' }, 'malformed'],
      [{ sub: 42 }, 'malformed'],
      [{ jti: undefined }, 'malformed'],
      [{ client_id: ['cli'] }, 'malformed'],
      [{ scope: ['openid'] }, 'malformed'],
      [{ aud: ['cli', 7] }, 'malformed'],
      [{ iss: undefined }, 'wrong_issuer'],
      [{ iss: `${ISSUER}/` }, 'wrong_issuer'],
      [{ exp: now() }, 'expired'],
      [{ nbf: now() + 30 }, 'not_yet_valid'],
      [{ nbf: 'soon' }, 'malformed'],
    ];
    for (const [change, reason] of cases) {
      const token = await signRaw(ring, header, { ...claims(), ...change });
      expect(await verifyAccessToken(ring, ISSUER, token, manualClock()), JSON.stringify(change)).toEqual({
        ok: false,
        reason,
      });
    }
    const missingTyp = await signRaw(ring, { alg: 'ES256', kid: ring.signer.kid }, claims());
    expect(await verifyAccessToken(ring, ISSUER, missingTyp, manualClock())).toEqual({
      ok: false,
      reason: 'wrong_type',
    });
  });
});

describe('pluggable signature primitives', () => {
  it('signs and verifies through the JwsCrypto the ring was loaded with', async () => {
    const calls: string[] = [];
    const counting: JwsCrypto = {
      async signer(jwk, alg) {
        const sign = await webCryptoJws.signer(jwk, alg);
        return (data) => {
          calls.push(`sign ${alg}`);
          return sign(data);
        };
      },
      async verifier(jwk, alg) {
        const verify = await webCryptoJws.verifier(jwk, alg);
        return (data, signature) => {
          calls.push(`verify ${alg}`);
          return verify(data, signature);
        };
      },
    };
    const clock = manualClock();
    const record = await generateSigningKey('EdDSA', SECRET, new Date(clock.now()));
    const ring = await KeyRing.load([record], SECRET, new Date(clock.now()), { jwsCrypto: counting });
    const input = { subject: 'u1', clientId: 'cli', audience: ['cli'], scope: [], lifetimeSeconds: 60 };
    const { token } = await issueAccessToken(ring, ISSUER, input, clock);
    await issueIdToken(
      ring,
      ISSUER,
      { subject: 'u1', clientId: 'cli', authTime: 1, grantId: 'g', claims: {}, lifetimeSeconds: 60 },
      clock,
    );
    expect((await verifyAccessToken(ring, ISSUER, token, clock)).ok).toBe(true);
    expect(calls).toEqual(['sign EdDSA', 'sign EdDSA', 'verify EdDSA']);

    // Expired, another issuer's or not an access token: refused before any signature check.
    calls.length = 0;
    const [header, payload, signature] = token.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
    const forge = (change: Record<string, unknown>) =>
      `${header}.${Buffer.from(JSON.stringify({ ...claims, ...change })).toString('base64url')}.${signature}`;
    expect(await verifyAccessToken(ring, ISSUER, forge({ exp: 1 }), clock)).toEqual({
      ok: false,
      reason: 'expired',
    });
    expect(await verifyAccessToken(ring, ISSUER, forge({ iss: 'https://evil.test' }), clock)).toEqual({
      ok: false,
      reason: 'wrong_issuer',
    });
    clock.advance(61);
    expect(await verifyAccessToken(ring, ISSUER, token, clock)).toEqual({ ok: false, reason: 'expired' });
    expect(calls).toEqual([]);
    // A forged token that is otherwise current costs its signature check, and fails it.
    expect(await verifyAccessToken(ring, ISSUER, forge({ exp: 4_000_000_000 }), clock)).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
    expect(calls).toEqual(['verify EdDSA']);
  });
});
