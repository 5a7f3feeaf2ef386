import type { AuditEventOf } from '@idgate/schema';
import { type AdminChange, adminActor, recordAdminChange } from '../audit/admin.js';
import { originFields, recordAuditEvent } from '../audit/record.js';
import { type GrantRevocationContext, publishGrantRevocations } from '../grants/revoke-grant.js';
import type { GrantRecord } from '../model.js';
import type { Storage } from '../ports/storage.js';
import { type AdminPorts, nowOf } from './ports.js';

/** What an administrator's revocation needs besides the transaction it runs in. */
export type RevocationPorts = Pick<
  AdminPorts,
  'clock' | 'keyPolicy' | 'auditActor' | 'auditOrigin' | 'auditIds'
>;

type RevocationReason = AuditEventOf<'token.revoked'>['details']['reason'];

/** Publishing revoked grants through `storage` (a transaction's: the entries land with the change). */
export const revocationContext = (storage: Storage, ports: RevocationPorts): GrantRevocationContext => ({
  clock: ports.clock,
  storage,
  maxTokenLifetimeSeconds: ports.keyPolicy.maxTokenLifetimeSeconds,
});

/**
 * Records an administrator's ending of sessions or revoking of grants (`admin.changed`) and the
 * grants it revoked (`token.revoked` with `reason`), through the transaction that made the change.
 */
export async function recordAdminRevocation(
  storage: Storage,
  ports: RevocationPorts,
  userId: string,
  change: Pick<AdminChange, 'objectKind' | 'objectId' | 'operation'> | null,
  revoked: readonly GrantRecord[],
  reason: RevocationReason = 'admin',
): Promise<void> {
  if (change !== null)
    await recordAdminChange(storage, ports, { ...change, action: 'updated', subject: userId });
  if (revoked.length === 0) return;
  await recordAuditEvent(
    storage,
    {
      type: 'token.revoked',
      actor: adminActor(ports),
      subject: userId,
      ...originFields(ports.auditOrigin),
      details: { reason, tokenType: 'grant', grantIds: revoked.map((g) => g.id), jti: null },
    },
    ports.clock,
    ports.auditIds,
  );
}

/**
 * Takes away everything a user is signed in with, through `storage` (the transaction of the change
 * that calls for it, such as disabling the user): every live browser session ends and every grant
 * is revoked and published to the shared revocation set, so refresh tokens stop working and every
 * replica refuses the access tokens at once. Records the sessions' ending (`admin.changed`,
 * operation `end-all`, when any ended) and the grants' revocation (`token.revoked` with `reason`).
 * @returns how many sessions ended and how many live grants were revoked.
 */
export async function endUserAccess(
  storage: Storage,
  ports: RevocationPorts,
  userId: string,
  reason: RevocationReason,
): Promise<{ endedSessions: number; revokedGrants: number }> {
  const now = nowOf(ports);
  const ended = await storage.sessions.endByUser(userId, now);
  const revoked = await storage.grants.revokeByUser(userId, now);
  await publishGrantRevocations(revocationContext(storage, ports), revoked);
  const sessions = { objectKind: 'session', objectId: userId, operation: 'end-all' } as const;
  await recordAdminRevocation(storage, ports, userId, ended.length > 0 ? sessions : null, revoked, reason);
  return {
    endedSessions: ended.length,
    revokedGrants: revoked.filter((grant) => grant.expiresAt.getTime() > now.getTime()).length,
  };
}
