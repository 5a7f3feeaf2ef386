import { recordAuditEvent } from '../audit/record.js';
import { requestOrigin, type TokenEndpointContext } from './context.js';
import { revokeGrant } from './revoke-grant.js';

/**
 * What a credential presented twice (an authorization code, a refresh token outside its reuse
 * window) costs: the grant it produced is revoked (when there is one) and the replay is recorded,
 * acted by the presenting client, through the step's transaction (RFC 9700 §2.2.2, §4.14.2).
 * @example await revokeReplayedGrant(context, { type: 'code.replayed', codeId, grantId, subject, clientId, presentedBy });
 */
export async function revokeReplayedGrant(
  context: TokenEndpointContext,
  replay: (
    | { type: 'code.replayed'; codeId: string; grantId: string | null }
    | { type: 'refresh.reuse-detected'; grantId: string }
  ) & {
    /** The user the grant is of. */
    subject: string;
    /** The client the credential was issued to. */
    clientId: string;
    /** The client that presented it again. */
    presentedBy: string;
  },
): Promise<void> {
  const { storage, clock } = context;
  if (replay.grantId !== null)
    await revokeGrant(
      { clock, storage, maxTokenLifetimeSeconds: context.lifetimes.maxAccessToken },
      replay.grantId,
    );
  const envelope = {
    actor: { kind: 'client', id: replay.presentedBy },
    subject: replay.subject,
    clientId: replay.clientId,
    ...requestOrigin(context),
    outcome: 'failure',
  } as const;
  await recordAuditEvent(
    storage,
    replay.type === 'code.replayed'
      ? {
          ...envelope,
          type: replay.type,
          details: {
            codeId: replay.codeId,
            grantId: replay.grantId,
            grantRevoked: replay.grantId !== null,
          },
        }
      : { ...envelope, type: replay.type, details: { grantId: replay.grantId, grantRevoked: true } },
    clock,
    context.auditIds,
  );
}
