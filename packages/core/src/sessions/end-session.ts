import { publishGrantRevocations } from '../grants/revoke-grant.js';
import type { BrowserSessionRepository, GrantRepository } from '../ports/oidc-storage.js';
import type { Clock } from '../ports/runtime.js';
import type { RevocationRepository } from '../ports/storage.js';

/** What ending a browser session touches. */
export interface EndSessionContext {
  storage: { sessions: BrowserSessionRepository; grants: GrantRepository; revocations: RevocationRepository };
  clock: Clock;
  /** The longest access (and ID) token lifetime, in seconds. */
  maxTokenLifetimeSeconds: number;
}

/**
 * Signs a browser out (OIDC RP-Initiated Logout §2): ends its session and, when `revokeGrants`,
 * revokes every grant made in it and publishes their revocation, so every replica refuses their
 * tokens at once.
 * @returns how many grants were revoked.
 * @example await endBrowserSession(session.id, { revokeGrants: true }, context);
 */
export async function endBrowserSession(
  sessionId: string,
  options: { revokeGrants: boolean },
  context: EndSessionContext,
): Promise<number> {
  const now = new Date(context.clock.now());
  await context.storage.sessions.end(sessionId, now);
  if (!options.revokeGrants) return 0;
  const revoked = await context.storage.grants.revokeBySession(sessionId, now);
  await publishGrantRevocations(context, revoked);
  return revoked.length;
}
