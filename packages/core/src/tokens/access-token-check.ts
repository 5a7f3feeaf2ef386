import type { AccessTokenClaims } from '@idgate/schema';
import type { KeyRing } from '../keys/key-ring.js';
import type { ClientRecord, RevocationKind, TrustRecord, UserRecord } from '../model.js';
import type { Clock } from '../ports/runtime.js';
import { type AccessTokenVerification, type LiveTokenRejection, verifyAccessToken } from './access-token.js';

/** What deciding whether an access token is live needs. */
export interface LiveTokenContext {
  issuer: string;
  keys: KeyRing;
  clock: Clock;
  findUser(id: string): Promise<UserRecord | undefined>;
  findClient(clientId: string): Promise<ClientRecord | undefined>;
  isRevoked(kind: RevocationKind, value: string): Promise<boolean>;
  /**
   * The latest not-before covering a token of `clientId` for `userId` (null: a client acting for
   * itself), if any: a token issued before it is revoked.
   */
  notBefore?(clientId: string, userId: string | null): Promise<Date | undefined>;
  /**
   * Verifies the JWT itself (signature, issuer, type, expiry); defaults to {@link verifyAccessToken}
   * with `keys`. A server may pass a cached verifier here: only this step depends on the token
   * alone, so caching it never hides a revocation or a disabled user.
   */
  verify?: (token: string) => Promise<AccessTokenVerification>;
  /**
   * The trust `name`, for tokens a token exchange issued (`client_id` `trust:<name>`): such a token
   * is live while its trust exists. Omitted: those tokens are refused (`client_gone`).
   */
  findTrust?(name: string): Promise<TrustRecord | undefined>;
}

/**
 * Whether a JWT issued at `iat` (whole seconds) was issued before `notBefore`: one issued in the
 * same second as the instant counts as before it, since its `iat` cannot say which came first.
 * @example issuedBefore(claims.iat, await storage.notBefore.latestFor(clientId, userId))
 */
export function issuedBefore(iat: number, notBefore: Date | undefined): boolean {
  return notBefore !== undefined && iat * 1000 < Math.floor(notBefore.getTime() / 1000) * 1000 + 1000;
}

/**
 * Whether a record made at `createdAt` (a grant, session, code: milliseconds) was made before
 * `notBefore` — at the same instant counts as before.
 * @example madeBefore(grant.createdAt, await storage.notBefore.latestFor(grant.clientId, grant.userId))
 */
export function madeBefore(createdAt: Date, notBefore: Date | undefined): boolean {
  return notBefore !== undefined && createdAt.getTime() <= notBefore.getTime();
}

/** A live access token, with whom it speaks for. */
export interface LiveAccessToken {
  claims: AccessTokenClaims;
  audience: string[];
  scope: string[];
  /** Undefined for a token a token exchange issued (see `workload`). */
  client?: ClientRecord;
  /** Undefined for a client acting for itself. */
  user?: UserRecord;
  /** The identity a trust made for a token exchange's token: its trust, username and groups. */
  workload?: { trust: string; username: string; groups: string[] };
}

/**
 * The one definition of a live access token, shared by token review, userinfo and introspection:
 * it verifies, is not revoked (by jti or grant), its client still exists, and its user (unless the
 * client acts for itself) exists and is active. A refusal is a code; each caller words it (or
 * not: introspection never says why) with {@link ACCESS_TOKEN_REJECTION_MESSAGES}.
 * @example
 * const checked = await checkAccessToken(token, context);
 * if (!checked.ok) return { active: false, reason: checked.reason }; // e.g. 'expired', 'revoked'
 */
export async function checkAccessToken(
  token: string,
  context: LiveTokenContext,
): Promise<{ ok: true; token: LiveAccessToken } | { ok: false; reason: LiveTokenRejection }> {
  const verified = await (context.verify?.(token) ??
    verifyAccessToken(context.keys, context.issuer, token, context.clock));
  if (!verified.ok) return verified;
  const { claims } = verified;
  if (await context.isRevoked('jti', claims.jti)) return { ok: false, reason: 'revoked' };
  if (claims.sid !== undefined && (await context.isRevoked('sid', claims.sid))) {
    return { ok: false, reason: 'revoked' };
  }
  const raw = claims as unknown as Record<string, unknown>;
  if (claims.client_id.startsWith('trust:') && typeof raw.trust === 'string') {
    if (claims.client_id !== `trust:${raw.trust}` || context.findTrust === undefined)
      return { ok: false, reason: 'client_gone' };
    if ((await context.findTrust(raw.trust)) === undefined) return { ok: false, reason: 'trust_gone' };
    const username = raw.preferred_username;
    const groups = raw.groups;
    if (typeof username !== 'string' || !Array.isArray(groups) || !groups.every((g) => typeof g === 'string'))
      return { ok: false, reason: 'malformed' };
    return {
      ok: true,
      token: {
        claims,
        audience: verified.audience,
        scope: verified.scope,
        workload: { trust: raw.trust, username, groups: groups as string[] },
      },
    };
  }
  const userId = claims.sub === claims.client_id ? null : claims.sub;
  if (issuedBefore(claims.iat, await context.notBefore?.(claims.client_id, userId)))
    return { ok: false, reason: 'revoked' };
  const client = await context.findClient(claims.client_id);
  if (client === undefined) return { ok: false, reason: 'client_gone' };
  const live: LiveAccessToken = { claims, audience: verified.audience, scope: verified.scope, client };
  if (claims.sub !== claims.client_id) {
    const user = await context.findUser(claims.sub);
    if (user === undefined) return { ok: false, reason: 'user_gone' };
    if (user.disabled) return { ok: false, reason: 'user_disabled' };
    live.user = user;
  }
  return { ok: true, token: live };
}
