import type { IntrospectionResponse } from '@idgate/schema';
import type { ClientRecord, UserRecord } from '../model.js';
import type { GrantRepository, RefreshTokenRepository } from '../ports/oidc-storage.js';
import { hashSecret } from '../secrets.js';
import { checkAccessToken, type LiveTokenContext, madeBefore } from './access-token-check.js';

/** What introspection needs. */
export interface IntrospectionContext extends LiveTokenContext {
  storage: { grants: GrantRepository; refreshTokens: RefreshTokenRepository };
}

const INACTIVE: IntrospectionResponse = { active: false };

/**
 * Token introspection (RFC 7662 §2.2): `active: true` with the token's claims for a live access
 * token or a live refresh token (unused, unexpired, its grant alive, its user active), and a bare
 * `active: false` for anything else — never a reason, which would help an attacker.
 * @example const answer = await introspectToken(form.token, form.token_type_hint, context);
 */
export async function introspectToken(
  token: string,
  hint: string | undefined,
  context: IntrospectionContext,
): Promise<IntrospectionResponse> {
  const asRefresh = () => introspectRefreshToken(token, context);
  const asAccess = async () => {
    const checked = await checkAccessToken(token, context);
    if (!checked.ok) return undefined;
    const { claims, audience, scope, user, workload } = checked.token;
    const answer: IntrospectionResponse = {
      active: true,
      token_type: 'Bearer',
      client_id: claims.client_id,
      sub: claims.sub,
      scope: scope.join(' '),
      exp: claims.exp,
      iat: claims.iat,
      iss: claims.iss,
      aud: audience,
      jti: claims.jti,
    };
    if (claims.sid !== undefined) answer.sid = claims.sid;
    if (user !== undefined) answer.username = user.username;
    else if (workload !== undefined) answer.username = workload.username;
    return answer;
  };
  const order = hint === 'refresh_token' ? [asRefresh, asAccess] : [asAccess, asRefresh];
  for (const attempt of order) {
    const answer = await attempt();
    if (answer !== undefined) return answer;
  }
  return INACTIVE;
}

async function introspectRefreshToken(
  token: string,
  context: IntrospectionContext,
): Promise<IntrospectionResponse | undefined> {
  if (token.length > 512) return undefined;
  const record = await context.storage.refreshTokens.findByHash(await hashSecret(token));
  const now = context.clock.now();
  if (record === undefined || record.usedAt !== null || record.expiresAt.getTime() <= now) return undefined;
  const grant = await context.storage.grants.findById(record.grantId);
  if (grant === undefined || grant.revokedAt !== null || grant.expiresAt.getTime() <= now) return undefined;
  if (madeBefore(grant.createdAt, await context.notBefore?.(grant.clientId, grant.userId))) return undefined;
  const client: ClientRecord | undefined = await context.findClient(record.clientId);
  const user: UserRecord | undefined = await context.findUser(record.userId);
  if (client === undefined || user === undefined || user.disabled) return undefined;
  return {
    active: true,
    token_type: 'refresh_token',
    client_id: record.clientId,
    sub: user.id,
    username: user.username,
    scope: record.scope.join(' '),
    exp: Math.floor(record.expiresAt.getTime() / 1000),
    iat: Math.floor(record.createdAt.getTime() / 1000),
    iss: context.issuer,
    sid: grant.id,
  };
}
