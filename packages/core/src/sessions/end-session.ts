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
 * Which grants of a browser session signing out revokes: `client`, those of the application
 * the sign-out came from (none when it names none), so that signing out of one web application
 * leaves a kubectl session alone; `all`, every grant made in the session (a global logout);
 * `none`, no grant (the tokens live on until they expire).
 */
export type LogoutRevocation = 'client' | 'all' | 'none';

/**
 * Signs a browser out (OIDC RP-Initiated Logout §2): ends its session and revokes the grants
 * `options.revokeGrants` says (see {@link LogoutRevocation}), publishing their revocation so
 * every replica refuses their tokens at once.
 * @returns how many grants were revoked.
 * @example await endBrowserSession(session.id, { revokeGrants: 'client', clientId: 'cl_web' }, context);
 */
export async function endBrowserSession(
  sessionId: string,
  options: { revokeGrants: LogoutRevocation; clientId?: string | undefined },
  context: EndSessionContext,
): Promise<number> {
  const now = new Date(context.clock.now());
  await context.storage.sessions.end(sessionId, now);
  const { revokeGrants, clientId } = options;
  if (revokeGrants === 'none' || (revokeGrants === 'client' && clientId === undefined)) return 0;
  const only = revokeGrants === 'client' ? clientId : undefined;
  const revoked = await context.storage.grants.revokeBySession(sessionId, now, only);
  await publishGrantRevocations(context, revoked);
  return revoked.length;
}
