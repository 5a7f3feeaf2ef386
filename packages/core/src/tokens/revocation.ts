import {
  type AuditEventDraft,
  type AuditEventIds,
  originFields,
  type RequestOrigin,
  recordAuditEvent,
} from '../audit/record.js';
import { OAuthProtocolError } from '../errors.js';
import { revokeGrant } from '../grants/revoke-grant.js';
import type { KeyRing } from '../keys/key-ring.js';
import type { ClientRecord } from '../model.js';
import type { AuditEventRepository } from '../ports/audit-storage.js';
import type { GrantRepository, RefreshTokenRepository } from '../ports/oidc-storage.js';
import type { Clock } from '../ports/runtime.js';
import type { RevocationRepository } from '../ports/storage.js';
import { hashSecret } from '../secrets.js';
import { verifyAccessToken } from './access-token.js';

/** What revocation needs. */
export interface RevocationContext {
  issuer: string;
  keys: KeyRing;
  clock: Clock;
  /** The ids of the audit events recorded: the instance's, so they sort as made. */
  auditIds?: AuditEventIds;
  storage: RevocationStorage;
  maxTokenLifetimeSeconds: number;
}

/** The repositories revocation writes, and one transaction over them. */
export interface RevocationStorage {
  grants: GrantRepository;
  refreshTokens: RefreshTokenRepository;
  revocations: RevocationRepository;
  auditEvents: AuditEventRepository;
  transaction<T>(work: (storage: RevocationStorage) => Promise<T>): Promise<T>;
}

const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/**
 * Token revocation (RFC 7009 §2.1) for an authenticated client. A refresh token revokes its whole
 * grant; an access token goes into the revocation set until it expires. A token that is unknown,
 * malformed or already dead is answered like a success (§2.2); a live token of another client
 * is refused, as §2.1 asks.
 * `origin` is where the request came from, for the `token.revoked` event.
 * @example await revokeToken(form.token, form.token_type_hint, client, context, { address: request.ip });
 */
export async function revokeToken(
  token: string,
  hint: string | undefined,
  client: ClientRecord,
  context: RevocationContext,
  origin?: RequestOrigin,
): Promise<void> {
  const notYours = () => new OAuthProtocolError('invalid_request', 'the token was not issued to this client');
  const tryRefresh = async () => {
    const record = await context.storage.refreshTokens.findByHash(await hashSecret(token));
    if (record === undefined) return false;
    if (record.clientId !== client.clientId) throw notYours();
    await context.storage.transaction(async (storage) => {
      await revokeGrant({ ...context, storage }, record.grantId);
      await recordAuditEvent(
        storage,
        revoked(
          client,
          record.userId,
          { tokenType: 'refresh_token', grantIds: [record.grantId], jti: null },
          origin,
        ),
        context.clock,
        context.auditIds,
      );
    });
    return true;
  };
  const tryAccess = async () => {
    if (!JWT_SHAPE.test(token)) return false;
    const verified = await verifyAccessToken(context.keys, context.issuer, token, context.clock);
    if (!verified.ok) return false;
    if (verified.claims.client_id !== client.clientId) throw notYours();
    const { jti, sub } = verified.claims;
    await context.storage.transaction(async (storage) => {
      await storage.revocations.add({
        kind: 'jti',
        value: jti,
        createdAt: new Date(context.clock.now()),
        expiresAt: new Date(verified.claims.exp * 1000),
      });
      const event = revoked(client, sub, { tokenType: 'access_token', grantIds: [], jti }, origin);
      await recordAuditEvent(storage, event, context.clock, context.auditIds);
    });
    return true;
  };
  // The hint only orders the look-ups (§2.1); a wrong hint still finds the token.
  const order = hint === 'access_token' ? [tryAccess, tryRefresh] : [tryRefresh, tryAccess];
  for (const attempt of order) if (await attempt()) return;
}

/** The `token.revoked` event of a client's revocation request. */
function revoked(
  client: ClientRecord,
  userId: string,
  token: { tokenType: 'access_token' | 'refresh_token'; grantIds: string[]; jti: string | null },
  origin: RequestOrigin | undefined,
): AuditEventDraft {
  return {
    type: 'token.revoked',
    actor: { kind: 'client', id: client.clientId },
    subject: userId,
    clientId: client.clientId,
    ...originFields(origin),
    details: { reason: 'revocation-endpoint', ...token },
  };
}
