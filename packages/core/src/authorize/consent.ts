import { type AuditEventIds, originFields, type RequestOrigin, recordAuditEvent } from '../audit/record.js';
import type { AuditEventRepository } from '../ports/audit-storage.js';
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
  context: {
    consents: ConsentRepository;
    clock: Clock;
    auditIds?: AuditEventIds;
    /** Where the `consent.granted` event goes, and where the request came from. */
    audit?: { events: AuditEventRepository; origin?: RequestOrigin };
  },
): Promise<void> {
  const existing = await context.consents.find(userId, clientId);
  await context.consents.save({
    userId,
    clientId,
    scope: [...new Set([...(existing?.scope ?? []), ...scope])],
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
      details: { scopes: [...scope] },
    },
    context.clock,
    context.auditIds,
  );
}
