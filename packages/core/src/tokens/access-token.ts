import type { AccessTokenClaims } from '@idgate/schema';
import { errors, type JWTHeaderParameters, jwtVerify, SignJWT } from 'jose';
import { base64url, randomBytes } from '../internal/encoding.js';
import type { KeyRing } from '../keys/key-ring.js';
import { SIGNING_ALGORITHMS } from '../keys/signing-key.js';
import type { Clock } from '../ports/runtime.js';

/** What an access token says about whom, for whom. */
export interface AccessTokenInput {
  /** The user id, or the client id for a client acting on its own behalf. */
  subject: string;
  clientId: string;
  audience: readonly string[];
  scope: readonly string[];
  /** The grant (session) id: revoking it revokes every token of the grant. */
  grantId?: string;
  /** When the user authenticated, seconds since the epoch. */
  authTime?: number;
  lifetimeSeconds: number;
}

/** An issued access token. */
export interface IssuedAccessToken {
  token: string;
  jti: string;
  /** Expiry, seconds since the epoch. */
  expiresAt: number;
  expiresIn: number;
}

/**
 * Issues a JWT access token (RFC 9068): header `typ: at+jwt`, claims iss, sub, aud, exp, iat, jti,
 * client_id, scope and, when the token belongs to a grant, sid.
 * @example const { token } = await issueAccessToken(ring, 'https://id.example.com/oauth', { subject: user.id, clientId, audience: [clientId], scope: ['openid'], lifetimeSeconds: 3600 }, systemClock);
 */
export async function issueAccessToken(
  ring: KeyRing,
  issuer: string,
  input: AccessTokenInput,
  clock: Clock,
): Promise<IssuedAccessToken> {
  const iat = Math.floor(clock.now() / 1000);
  const expiresAt = iat + input.lifetimeSeconds;
  const jti = base64url(randomBytes(16));
  const claims: Record<string, unknown> = { client_id: input.clientId, scope: input.scope.join(' ') };
  if (input.grantId !== undefined) claims.sid = input.grantId;
  if (input.authTime !== undefined) claims.auth_time = input.authTime;
  const audience = input.audience.length === 1 ? (input.audience[0] as string) : [...input.audience];
  const token = await new SignJWT(claims)
    .setProtectedHeader({ alg: ring.signer.alg, kid: ring.signer.kid, typ: 'at+jwt' })
    .setIssuer(issuer)
    .setSubject(input.subject)
    .setAudience(audience)
    .setIssuedAt(iat)
    .setExpirationTime(expiresAt)
    .setJti(jti)
    .sign(ring.signer.key);
  return { token, jti, expiresAt, expiresIn: input.lifetimeSeconds };
}

/** Why a token did not verify; each maps to a short message a caller may show. */
export type AccessTokenRejection =
  | 'malformed'
  | 'expired'
  | 'not_yet_valid'
  | 'bad_signature'
  | 'unknown_key'
  | 'algorithm_not_allowed'
  | 'wrong_issuer'
  | 'wrong_type';

/** Messages for {@link AccessTokenRejection}, short enough for TokenReview's `status.error`. */
export const ACCESS_TOKEN_REJECTION_MESSAGES: Record<AccessTokenRejection, string> = {
  malformed: 'token is malformed',
  expired: 'token has expired',
  not_yet_valid: 'token is not valid yet',
  bad_signature: 'token signature is invalid',
  unknown_key: 'token is signed by an unknown key',
  algorithm_not_allowed: 'token signing algorithm is not allowed',
  wrong_issuer: 'token was not issued by this server',
  wrong_type: 'token is not an access token',
};

/** The outcome of {@link verifyAccessToken}. */
export type AccessTokenVerification =
  | { ok: true; claims: AccessTokenClaims; audience: string[]; scope: string[] }
  | { ok: false; reason: AccessTokenRejection };

/** JWTs longer than this are refused before any parsing: no idgate token comes near it. */
export const MAX_ACCESS_TOKEN_LENGTH = 8192;

const REQUIRED_CLAIMS = ['exp', 'iat', 'jti', 'sub', 'client_id'];
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

function reject(reason: AccessTokenRejection): AccessTokenVerification {
  return { ok: false, reason };
}

/**
 * Verifies an idgate access token: compact JWS, `typ: at+jwt`, an allowed algorithm (never
 * `none`), a published key whose algorithm matches the header, the issuer, and exp/iat at the
 * clock's instant. Never throws for a bad token: the reason is in the result.
 * @example
 * const result = await verifyAccessToken(ring, issuer, token, systemClock);
 * if (!result.ok) console.log(ACCESS_TOKEN_REJECTION_MESSAGES[result.reason]);
 */
export async function verifyAccessToken(
  ring: KeyRing,
  issuer: string,
  token: string,
  clock: Clock,
): Promise<AccessTokenVerification> {
  // Anything that is not three base64url segments is refused before jose builds an error for it.
  if (token.length === 0 || token.length > MAX_ACCESS_TOKEN_LENGTH || !COMPACT_JWS.test(token))
    return reject('malformed');
  let unknownKey = false;
  try {
    const { payload } = await jwtVerify(
      token,
      (header: JWTHeaderParameters) => {
        const key = header.kid === undefined ? undefined : ring.verificationKey(header.kid);
        if (key === undefined || key.alg !== header.alg) {
          unknownKey = key === undefined;
          throw new errors.JWSSignatureVerificationFailed();
        }
        return key.key;
      },
      {
        issuer,
        typ: 'at+jwt',
        algorithms: [...SIGNING_ALGORITHMS],
        requiredClaims: REQUIRED_CLAIMS,
        currentDate: new Date(clock.now()),
      },
    );
    if (
      typeof payload.client_id !== 'string' ||
      (payload.scope !== undefined && typeof payload.scope !== 'string')
    ) {
      return reject('malformed');
    }
    const audience =
      payload.aud === undefined ? [] : Array.isArray(payload.aud) ? payload.aud : [payload.aud];
    const scope = typeof payload.scope === 'string' && payload.scope !== '' ? payload.scope.split(' ') : [];
    return { ok: true, claims: payload as AccessTokenClaims, audience, scope };
  } catch (error) {
    if (unknownKey) return reject('unknown_key');
    if (error instanceof errors.JWTExpired) return reject('expired');
    if (error instanceof errors.JWSSignatureVerificationFailed) return reject('bad_signature');
    if (error instanceof errors.JOSEAlgNotAllowed) return reject('algorithm_not_allowed');
    if (error instanceof errors.JWTClaimValidationFailed) {
      if (error.claim === 'iss') return reject('wrong_issuer');
      if (error.claim === 'typ') return reject('wrong_type');
      if (error.claim === 'nbf' || error.claim === 'iat') return reject('not_yet_valid');
    }
    return reject('malformed');
  }
}
