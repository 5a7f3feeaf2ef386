import type { GrantRecord } from '../model.js';
import type { GrantRepository } from '../ports/oidc-storage.js';
import type { Clock } from '../ports/runtime.js';
import type { RevocationRepository } from '../ports/storage.js';

/** What revoking grants needs. */
export interface GrantRevocationContext {
  clock: Clock;
  storage: { grants: GrantRepository; revocations: RevocationRepository };
  /** The longest access (and ID) token lifetime, in seconds. */
  maxTokenLifetimeSeconds: number;
}

/**
 * Puts revoked grants into the shared revocation set, so that token review and introspection
 * refuse their access tokens at once; the entry lives as long as any such token could.
 */
export async function publishGrantRevocations(
  context: GrantRevocationContext,
  grants: readonly GrantRecord[],
): Promise<void> {
  const now = context.clock.now();
  for (const grant of grants) {
    await context.storage.revocations.add({
      kind: 'sid',
      value: grant.id,
      createdAt: new Date(now),
      expiresAt: new Date(now + context.maxTokenLifetimeSeconds * 1000),
    });
  }
}

/**
 * Revokes a grant and every token it produced: its refresh tokens stop working because the grant
 * is revoked, its access tokens because the grant id is in the revocation set.
 * @example await revokeGrant(context, grantId);
 */
export async function revokeGrant(context: GrantRevocationContext, grantId: string): Promise<void> {
  const now = new Date(context.clock.now());
  const revoked = await context.storage.grants.revoke(grantId, now);
  // Publish even when it was revoked already: the entry may have been purged, never harmful.
  const grant = await context.storage.grants.findById(grantId);
  if (grant !== undefined && (revoked || grant.revokedAt !== null))
    await publishGrantRevocations(context, [grant]);
}
