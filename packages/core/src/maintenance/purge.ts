import type { Storage } from '../ports/storage.js';

/** How many expired records {@link purgeExpiredRecords} deleted, by kind. */
export interface PurgedRecords {
  authorizationCodes: number;
  refreshTokens: number;
  interactions: number;
  deviceAuthorizations: number;
  loginTransactions: number;
  revocations: number;
  /** Spent subject-token `jti`s of token exchanges whose token has expired. */
  subjectTokenUses: number;
  /** Audit events past their retention (when the caller purges those too). */
  auditEvents?: number;
}

/**
 * Deletes what can no longer be used: authorization codes, refresh tokens, pending sign-ins
 * (interactions, external-login transactions), device authorizations, revocation entries and spent subject-token `jti`s whose
 * expiry is before `now`. A used refresh token stays until it expires, so its reuse is still
 * recognised; a revocation stays as long as the token it revokes could be presented.
 * @example const purged = await purgeExpiredRecords(storage, new Date(clock.now()));
 */
export async function purgeExpiredRecords(storage: Storage, now: Date): Promise<PurgedRecords> {
  return {
    authorizationCodes: await storage.authorizationCodes.purgeExpired(now),
    refreshTokens: await storage.refreshTokens.purgeExpired(now),
    interactions: await storage.interactions.purgeExpired(now),
    deviceAuthorizations: await storage.deviceAuthorizations.purgeExpired(now),
    loginTransactions: await storage.loginTransactions.purgeExpired(now),
    revocations: await storage.revocations.purgeExpired(now),
    subjectTokenUses: await storage.subjectTokenUses.purgeExpired(now),
  };
}

/**
 * Deletes the audit events older than `cutoff` in batches of `batchSize` (each its own statement,
 * so a large backlog never holds one long lock), at most `maxBatches` of them a round.
 * @returns how many events were deleted.
 * @example const purged = await purgeAuditEvents(storage, new Date(now - retentionMs), 1000);
 */
export async function purgeAuditEvents(
  storage: Pick<Storage, 'auditEvents'>,
  cutoff: Date,
  batchSize: number,
  maxBatches = 100,
): Promise<number> {
  let total = 0;
  for (let batch = 0; batch < maxBatches; batch++) {
    const purged = await storage.auditEvents.purgeBefore(cutoff, batchSize);
    total += purged;
    if (purged < batchSize) break;
  }
  return total;
}
