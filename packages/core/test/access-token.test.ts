import type { JSONWebKeySet } from 'jose';
import {
  createLocalJWKSet,
  decodeProtectedHeader,
  generateKeyPair,
  jwtVerify,
  SignJWT,
  UnsecuredJWT,
} from 'jose';
import { describe, expect, it } from 'vitest';
import type { KeyRing } from '../src/keys/key-ring.js';
import { issueAccessToken, verifyAccessToken } from '../src/tokens/access-token.js';
import { ISSUER, keyRing, manualClock, signRaw } from './helpers.js';

const input = {
  subject: 'u1',
  clientId: 'cli',
  audience: ['cli'],
  scope: ['openid', 'groups'],
  grantId: 'g1',
  lifetimeSeconds: 600,
};

describe('RFC 9068 JWT access tokens', () => {
  for (const alg of ['RS256', 'ES256', 'EdDSA'] as const) {
    it(`issues an ${alg} token that jose verifies against the published JWKS`, async () => {
      const clock = manualClock();
      const ring = await keyRing(alg, clock);
      const issued = await issueAccessToken(ring, ISSUER, input, clock);
      expect(decodeProtectedHeader(issued.token)).toEqual({ alg, kid: ring.signer.kid, typ: 'at+jwt' });
      const { payload } = await jwtVerify(issued.token, createLocalJWKSet(ring.jwks() as JSONWebKeySet), {
        issuer: ISSUER,
        audience: 'cli',
        currentDate: new Date(clock.now()),
      });
      expect(payload).toMatchObject({
        sub: 'u1',
        client_id: 'cli',
        scope: 'openid groups',
        sid: 'g1',
        jti: issued.jti,
      });
      expect(payload.exp).toBe((payload.iat as number) + 600);
      expect(issued.expiresIn).toBe(600);
    });
  }

  it('never publishes private key material', async () => {
    const ring = await keyRing('RS256');
    for (const key of ring.jwks().keys) {
      for (const member of ['d', 'p', 'q', 'dp', 'dq', 'qi']) expect(key).not.toHaveProperty(member);
    }
  });
});

describe('access token verification', () => {
  async function setup(): Promise<{ ring: KeyRing; clock: ReturnType<typeof manualClock>; token: string }> {
    const clock = manualClock();
    const ring = await keyRing('ES256', clock);
    const { token } = await issueAccessToken(ring, ISSUER, input, clock);
    return { ring, clock, token };
  }

  it('accepts a valid token and returns its audience and scope', async () => {
    const { ring, clock, token } = await setup();
    const result = await verifyAccessToken(ring, ISSUER, token, clock);
    expect(result).toMatchObject({ ok: true, audience: ['cli'], scope: ['openid', 'groups'] });
  });

  it('rejects an expired token at exactly exp', async () => {
    const { ring, clock, token } = await setup();
    clock.advance(599);
    expect((await verifyAccessToken(ring, ISSUER, token, clock)).ok).toBe(true);
    clock.advance(1);
    expect(await verifyAccessToken(ring, ISSUER, token, clock)).toEqual({ ok: false, reason: 'expired' });
  });

  it('rejects another issuer', async () => {
    const { ring, clock, token } = await setup();
    expect(await verifyAccessToken(ring, 'https://other.test/oauth', token, clock)).toEqual({
      ok: false,
      reason: 'wrong_issuer',
    });
  });

  it('rejects a tampered payload', async () => {
    const { ring, clock, token } = await setup();
    const [h, p, s] = token.split('.');
    const payload = JSON.parse(Buffer.from(p as string, 'base64url').toString());
    payload.sub = 'admin';
    const forged = `${h}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${s}`;
    expect(await verifyAccessToken(ring, ISSUER, forged, clock)).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
  });

  it('rejects alg none', async () => {
    const { ring, clock } = await setup();
    const unsecured = new UnsecuredJWT({ client_id: 'cli', jti: 'j' })
      .setIssuer(ISSUER)
      .setSubject('u1')
      .setIssuedAt()
      .setExpirationTime('1h')
      .encode();
    const result = await verifyAccessToken(ring, ISSUER, unsecured, clock);
    expect(result.ok).toBe(false);
  });

  it('rejects a token signed by a key that is not published, even with a known kid', async () => {
    const { ring, clock } = await setup();
    const { privateKey } = await generateKeyPair('ES256');
    const forged = await new SignJWT({ client_id: 'cli' })
      .setProtectedHeader({ alg: 'ES256', kid: ring.signer.kid, typ: 'at+jwt' })
      .setIssuer(ISSUER)
      .setSubject('u1')
      .setJti('j')
      .setIssuedAt(Math.floor(clock.now() / 1000))
      .setExpirationTime(Math.floor(clock.now() / 1000) + 60)
      .sign(privateKey);
    expect(await verifyAccessToken(ring, ISSUER, forged, clock)).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
    const unknownKid = await new SignJWT({ client_id: 'cli' })
      .setProtectedHeader({ alg: 'ES256', kid: 'nope', typ: 'at+jwt' })
      .setIssuer(ISSUER)
      .setSubject('u1')
      .setJti('j')
      .setIssuedAt(Math.floor(clock.now() / 1000))
      .setExpirationTime(Math.floor(clock.now() / 1000) + 60)
      .sign(privateKey);
    expect(await verifyAccessToken(ring, ISSUER, unknownKid, clock)).toEqual({
      ok: false,
      reason: 'unknown_key',
    });
  });

  it('rejects an HS256 token that uses the public key as an HMAC secret (algorithm confusion)', async () => {
    const { ring, clock } = await setup();
    const jwk = ring.jwks().keys[0];
    const secret = new TextEncoder().encode(JSON.stringify(jwk));
    const forged = await new SignJWT({ client_id: 'cli' })
      .setProtectedHeader({ alg: 'HS256', kid: ring.signer.kid, typ: 'at+jwt' })
      .setIssuer(ISSUER)
      .setSubject('u1')
      .setJti('j')
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(secret);
    expect((await verifyAccessToken(ring, ISSUER, forged, clock)).ok).toBe(false);
  });

  it('rejects an ID token (typ JWT) presented as an access token', async () => {
    const { ring, clock } = await setup();
    const now = Math.floor(clock.now() / 1000);
    const idToken = await signRaw(
      ring,
      { alg: 'ES256', kid: ring.signer.kid, typ: 'JWT' },
      { client_id: 'cli', iss: ISSUER, sub: 'u1', jti: 'j', iat: now, exp: now + 60 },
    );
    expect(await verifyAccessToken(ring, ISSUER, idToken, clock)).toEqual({
      ok: false,
      reason: 'wrong_type',
    });
  });

  it('rejects garbage, empty and oversized input without throwing', async () => {
    const { ring, clock } = await setup();
    for (const garbage of [
      '',
      'x',
      'a.b.c',
      '...',
      'eyJhbGciOiJub25lIn0',
      'x'.repeat(9000),
      '\u0000\u0001.\u0002.\u0003',
    ]) {
      const result = await verifyAccessToken(ring, ISSUER, garbage, clock);
      expect(result.ok).toBe(false);
    }
    // A JWS with a non-JSON payload
    const jws = await signRaw(ring, { alg: 'ES256', kid: ring.signer.kid, typ: 'at+jwt' }, 'not json');
    expect(await verifyAccessToken(ring, ISSUER, jws, clock)).toEqual({ ok: false, reason: 'malformed' });
  });
});
