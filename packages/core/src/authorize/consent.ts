import type { ConsentRepository } from '../ports/oidc-storage.js';
import type { Clock } from '../ports/runtime.js';

/**
 * Remembers that `userId` consented to `scope` for `clientId`, added to what they consented to
 * before (a later, narrower request never takes back an earlier consent).
 * @example await giveConsent('u-1', 'portal', ['openid', 'email'], { consents, clock });
 */
export async function giveConsent(
  userId: string,
  clientId: string,
  scope: readonly string[],
  context: { consents: ConsentRepository; clock: Clock },
): Promise<void> {
  const existing = await context.consents.find(userId, clientId);
  await context.consents.save({
    userId,
    clientId,
    scope: [...new Set([...(existing?.scope ?? []), ...scope])],
    grantedAt: new Date(context.clock.now()),
  });
}
