import type { AccessTokenClaims } from '@idgate/schema';
import { base64url } from '../internal/encoding.js';
import type { KeyRing } from '../keys/key-ring.js';
import { type Clock, type Random, webCryptoRandom } from '../ports/runtime.js';
import { signCompactJws, verifyCompactJws } from './jws.js';

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
  /** Further claims about the subject (those a Kubernetes cluster maps); never the registered ones. */
  claims?: Readonly<Record<string, unknown>>;
}

/** An issued access token. */
export interface IssuedAccessToken {
  token: string;
  jti: string;
  /** Expiry, seconds since the epoch. */
  expiresAt: number;
  expiresIn: number;
}

/** An access token's claims, made and not yet signed (see {@link accessTokenClaims}). */
export interface PreparedAccessToken {
  claims: Record<string, unknown>;
  jti: string;
  /** Expiry, seconds since the epoch. */
  expiresAt: number;
  expiresIn: number;
}

/**
 * The claims of a JWT access token (RFC 9068): iss, sub, aud, exp, iat, jti, client_id, scope
 * and, when the token belongs to a grant, sid; signed by {@link signAccessToken}. For a caller
 * that records the token (its `jti`) before signing it; else {@link issueAccessToken}.
 * @example const prepared = accessTokenClaims(issuer, input, clock); const token = await signAccessToken(ring, prepared);
 */
export function accessTokenClaims(
  issuer: string,
  input: AccessTokenInput,
  clock: Clock,
  random: Random = webCryptoRandom,
): PreparedAccessToken {
  const iat = Math.floor(clock.now() / 1000);
  const expiresAt = iat + input.lifetimeSeconds;
  const jti = base64url(random.bytes(16));
  const audience = input.audience.length === 1 ? (input.audience[0] as string) : [...input.audience];
  const claims: Record<string, unknown> = {
    ...input.claims,
    client_id: input.clientId,
    scope: input.scope.join(' '),
    iss: issuer,
    sub: input.subject,
    aud: audience,
    iat,
    exp: expiresAt,
    jti,
  };
  if (input.grantId !== undefined) claims.sid = input.grantId;
  if (input.authTime !== undefined) claims.auth_time = input.authTime;
  return { claims, jti, expiresAt, expiresIn: input.lifetimeSeconds };
}

/**
 * Signs prepared access-token claims with the ring's signing key (header `typ: at+jwt`).
 * @example const token = await signAccessToken(ring, accessTokenClaims(issuer, input, clock));
 */
export function signAccessToken(ring: KeyRing, prepared: PreparedAccessToken): Promise<string> {
  return signCompactJws(ring.signer, 'at+jwt', prepared.claims);
}

/**
 * Issues a JWT access token (RFC 9068): {@link accessTokenClaims}, signed.
 * @example const { token } = await issueAccessToken(ring, 'https://id.example.com/oauth', { subject: user.id, clientId, audience: [clientId], scope: ['openid'], lifetimeSeconds: 3600 }, systemClock);
 */
export async function issueAccessToken(
  ring: KeyRing,
  issuer: string,
  input: AccessTokenInput,
  clock: Clock,
  random: Random = webCryptoRandom,
): Promise<IssuedAccessToken> {
  const prepared = accessTokenClaims(issuer, input, clock, random);
  const token = await signAccessToken(ring, prepared);
  return { token, jti: prepared.jti, expiresAt: prepared.expiresAt, expiresIn: prepared.expiresIn };
}

/** Why a token did not verify; {@link ACCESS_TOKEN_REJECTION_MESSAGES} words each. */
export type AccessTokenRejection =
  | 'malformed'
  | 'expired'
  | 'not_yet_valid'
  | 'bad_signature'
  | 'unknown_key'
  | 'algorithm_not_allowed'
  | 'wrong_issuer'
  | 'wrong_type';

/**
 * Why an access token is not live: it did not verify, or it verified but no longer speaks for
 * anyone (revoked by jti or grant, its client or user deleted, its user disabled).
 */
export type LiveTokenRejection =
  | AccessTokenRejection
  | 'revoked'
  | 'client_gone'
  | 'trust_gone'
  | 'user_gone'
  | 'user_disabled';

/**
 * The one wording of every {@link LiveTokenRejection}, short enough for TokenReview's
 * `status.error` and the `error_description` of a Bearer challenge. Code decides on the rejection
 * code; only what is shown reads this.
 * @example
 * if (!checked.ok) console.log(ACCESS_TOKEN_REJECTION_MESSAGES[checked.reason]);
 */
export const ACCESS_TOKEN_REJECTION_MESSAGES: Record<LiveTokenRejection, string> = {
  malformed: 'token is malformed',
  expired: 'token has expired',
  not_yet_valid: 'token is not valid yet',
  bad_signature: 'token signature is invalid',
  unknown_key: 'token is signed by an unknown key',
  algorithm_not_allowed: 'token signing algorithm is not allowed',
  wrong_issuer: 'token was not issued by this server',
  wrong_type: 'token is not an access token',
  revoked: 'token has been revoked',
  client_gone: 'client no longer exists',
  trust_gone: 'trust no longer exists',
  user_gone: 'user no longer exists',
  user_disabled: 'user is disabled',
};

/** The outcome of {@link verifyAccessToken}. */
export type AccessTokenVerification =
  | { ok: true; claims: AccessTokenClaims; audience: string[]; scope: string[] }
  | { ok: false; reason: AccessTokenRejection };

/** JWTs longer than this are refused before any parsing: no idgate token comes near it. */
export const MAX_ACCESS_TOKEN_LENGTH = 8192;

const REQUIRED_STRINGS = ['jti', 'sub', 'client_id'] as const;

function reject(reason: AccessTokenRejection): AccessTokenVerification {
  return { ok: false, reason };
}

// RFC 8725 §3.11 / RFC 9068 §4: `typ` compared case-insensitively, `application/` optional.
function normalizedTyp(typ: unknown): string | undefined {
  if (typeof typ !== 'string') return undefined;
  const lower = typ.toLowerCase();
  return lower.startsWith('application/') ? lower.slice('application/'.length) : lower;
}

const isStringArray = (value: unknown): value is string[] =>
  Array.isArray(value) && value.every((item) => typeof item === 'string');

/**
 * Verifies an idgate access token: compact JWS, `typ: at+jwt`, an allowed algorithm (never
 * `none`), a published key whose algorithm matches the header, the issuer, exp/nbf at the
 * clock's instant (`exp` is exclusive) and the signature. Type, issuer and expiry are checked
 * before the signature, so a stale token costs no signature check. Never throws for a bad token:
 * the reason is in the result.
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
  if (token.length === 0 || token.length > MAX_ACCESS_TOKEN_LENGTH) return reject('malformed');
  const now = Math.floor(clock.now() / 1000);
  // Whoever signed it, a token that has expired or is not for this server is refused as such,
  // without spending a signature check on it.
  const jws = await verifyCompactJws(ring, token, {
    precheck: (header, payload): AccessTokenRejection | undefined => {
      if (normalizedTyp(header.typ) !== 'at+jwt') return 'wrong_type';
      if (payload.iss !== issuer) return 'wrong_issuer';
      if (typeof payload.exp === 'number' && payload.exp <= now) return 'expired';
      return undefined;
    },
  });
  if (!jws.ok) return reject(jws.reason);
  const { payload } = jws;
  const { exp, iat, nbf, aud, scope } = payload;
  if (typeof exp !== 'number' || typeof iat !== 'number' || (nbf !== undefined && typeof nbf !== 'number'))
    return reject('malformed');
  if (REQUIRED_STRINGS.some((claim) => typeof payload[claim] !== 'string')) return reject('malformed');
  if (scope !== undefined && typeof scope !== 'string') return reject('malformed');
  if (aud !== undefined && typeof aud !== 'string' && !isStringArray(aud)) return reject('malformed');
  if (nbf !== undefined && nbf > now) return reject('not_yet_valid');
  const audience = aud === undefined ? [] : Array.isArray(aud) ? aud : [aud];
  const scopes = typeof scope === 'string' && scope !== '' ? scope.split(' ') : [];
  return { ok: true, claims: payload as unknown as AccessTokenClaims, audience, scope: scopes };
}
