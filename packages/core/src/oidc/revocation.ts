import { OAuthProtocolError } from '../errors.js';
import { revokeGrant } from '../grants/revoke-grant.js';
import type { KeyRing } from '../keys/key-ring.js';
import type { ClientRecord } from '../model.js';
import type { GrantRepository, RefreshTokenRepository } from '../ports/oidc-storage.js';
import type { Clock } from '../ports/runtime.js';
import type { RevocationRepository } from '../ports/storage.js';
import { hashSecret } from '../secrets.js';
import { verifyAccessToken } from '../tokens/access-token.js';

/** What revocation needs. */
export interface RevocationContext {
  issuer: string;
  keys: KeyRing;
  clock: Clock;
  storage: {
    grants: GrantRepository;
    refreshTokens: RefreshTokenRepository;
    revocations: RevocationRepository;
  };
  maxTokenLifetimeSeconds: number;
}

const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/**
 * Token revocation (RFC 7009 §2.1) for an authenticated client. A refresh token revokes its whole
 * grant; an access token goes into the revocation set until it expires. A token that is unknown,
 * malformed or already dead is answered like a success (§2.2); a live token of another client
 * is refused, as §2.1 asks.
 * @example await revokeToken(form.token, form.token_type_hint, client, context);
 */
export async function revokeToken(
  token: string,
  hint: string | undefined,
  client: ClientRecord,
  context: RevocationContext,
): Promise<void> {
  const notYours = () => new OAuthProtocolError('invalid_request', 'the token was not issued to this client');
  const tryRefresh = async () => {
    const record = await context.storage.refreshTokens.findByHash(await hashSecret(token));
    if (record === undefined) return false;
    if (record.clientId !== client.clientId) throw notYours();
    await revokeGrant(
      { ...context, maxTokenLifetimeSeconds: context.maxTokenLifetimeSeconds },
      record.grantId,
    );
    return true;
  };
  const tryAccess = async () => {
    if (!JWT_SHAPE.test(token)) return false;
    const verified = await verifyAccessToken(context.keys, context.issuer, token, context.clock);
    if (!verified.ok) return false;
    if (verified.claims.client_id !== client.clientId) throw notYours();
    await context.storage.revocations.add({
      kind: 'jti',
      value: verified.claims.jti,
      createdAt: new Date(context.clock.now()),
      expiresAt: new Date(verified.claims.exp * 1000),
    });
    return true;
  };
  // The hint only orders the look-ups (§2.1); a wrong hint still finds the token.
  const order = hint === 'access_token' ? [tryAccess, tryRefresh] : [tryRefresh, tryAccess];
  for (const attempt of order) if (await attempt()) return;
}
