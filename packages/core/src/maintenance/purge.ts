import type { Storage } from '../ports/storage.js';

/** How many expired records {@link purgeExpiredRecords} deleted, by kind. */
export interface PurgedRecords {
  authorizationCodes: number;
  refreshTokens: number;
  interactions: number;
  deviceAuthorizations: number;
  loginTransactions: number;
  revocations: number;
}

/**
 * Deletes what can no longer be used: authorization codes, refresh tokens, pending sign-ins
 * (interactions, external-login transactions), device authorizations and revocation entries whose
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
  };
}
