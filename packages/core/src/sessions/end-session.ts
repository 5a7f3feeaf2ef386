import { type AuditEventIds, originFields, type RequestOrigin, recordAuditEvent } from '../audit/record.js';
import { publishGrantRevocations } from '../grants/revoke-grant.js';
import type { AuditEventRepository } from '../ports/audit-storage.js';
import type { BrowserSessionRepository, GrantRepository } from '../ports/oidc-storage.js';
import type { Clock } from '../ports/runtime.js';
import type { RevocationRepository } from '../ports/storage.js';

/** The repositories ending a browser session writes, and one transaction over them. */
export interface EndSessionStorage {
  sessions: BrowserSessionRepository;
  grants: GrantRepository;
  revocations: RevocationRepository;
  auditEvents: AuditEventRepository;
  transaction<T>(work: (storage: EndSessionStorage) => Promise<T>): Promise<T>;
}

/** What ending a browser session touches. */
export interface EndSessionContext {
  storage: EndSessionStorage;
  clock: Clock;
  /** The ids of the audit events recorded: the instance's, so they sort as made. */
  auditIds?: AuditEventIds;
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

/** What ending a browser session does besides ending it: which grants go, and who signed out from where. */
export interface EndSessionOptions {
  revokeGrants: LogoutRevocation;
  clientId?: string | undefined;
  /** The signed-out user, for the `sign-out` event. */
  userId?: string | undefined;
  /** Where the request came from, for the `sign-out` event. */
  origin?: RequestOrigin | undefined;
}

/**
 * Signs a browser out (OIDC RP-Initiated Logout §2): ends its session and revokes the grants
 * `options.revokeGrants` says (see {@link LogoutRevocation}), publishing their revocation so
 * every replica refuses their tokens at once.
 * @returns how many grants were revoked.
 * @example await endBrowserSession(session.id, { revokeGrants: 'client', clientId: 'cl_web' }, context);
 */
export async function endBrowserSession(
  sessionId: string,
  options: EndSessionOptions,
  context: EndSessionContext,
): Promise<number> {
  const now = new Date(context.clock.now());
  const { revokeGrants, clientId } = options;
  return context.storage.transaction(async (storage) => {
    await storage.sessions.end(sessionId, now);
    const none = revokeGrants === 'none' || (revokeGrants === 'client' && clientId === undefined);
    const only = revokeGrants === 'client' ? clientId : undefined;
    const revoked = none ? [] : await storage.grants.revokeBySession(sessionId, now, only);
    await publishGrantRevocations({ ...context, storage }, revoked);
    const userId = options.userId ?? null;
    await recordAuditEvent(
      storage,
      {
        type: 'sign-out',
        actor: { kind: 'user', id: userId },
        subject: userId,
        clientId: clientId ?? null,
        ...originFields(options.origin),
        details: { grantsRevoked: revoked.length },
      },
      context.clock,
      context.auditIds,
    );
    return revoked.length;
  });
}
