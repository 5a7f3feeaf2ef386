import { type AuditEventIds, originFields, type RequestOrigin, recordAuditEvent } from '../audit/record.js';
import type { AuditEventRepository } from '../ports/audit-storage.js';
import type { ConsentRepository } from '../ports/oidc-storage.js';
import type { Clock } from '../ports/runtime.js';

/** What a person consented to: scopes, and the resources (cluster audiences, APIs) of the grant. */
export interface ConsentGiven {
  scope: readonly string[];
  /** The RFC 8707 resources the grant will cover; absent for a client without audiences. */
  resources?: readonly string[] | undefined;
}

/**
 * Remembers that `userId` consented to `given` (its scopes and resources) for `clientId`, added to
 * what they consented to before (a later, narrower request never takes back an earlier consent).
 * @example await giveConsent('u-1', 'portal', { scope: ['openid', 'email'] }, { consents, clock });
 */
export async function giveConsent(
  userId: string,
  clientId: string,
  given: ConsentGiven,
  context: {
    consents: ConsentRepository;
    clock: Clock;
    auditIds?: AuditEventIds;
    /** Where the `consent.granted` event goes, and where the request came from. */
    audit?: { events: AuditEventRepository; origin?: RequestOrigin };
  },
): Promise<void> {
  const existing = await context.consents.find(userId, clientId);
  const resources = [...new Set([...(existing?.resources ?? []), ...(given.resources ?? [])])];
  await context.consents.save({
    userId,
    clientId,
    scope: [...new Set([...(existing?.scope ?? []), ...given.scope])],
    resources: resources.length === 0 ? null : resources,
    grantedAt: new Date(context.clock.now()),
  });
  if (context.audit === undefined) return;
  await recordAuditEvent(
    { auditEvents: context.audit.events },
    {
      type: 'consent.granted',
      actor: { kind: 'user', id: userId },
      subject: userId,
      clientId,
      ...originFields(context.audit.origin),
      details: { scopes: [...given.scope], resources: [...(given.resources ?? [])] },
    },
    context.clock,
    context.auditIds,
  );
}
