import { createHmac } from 'node:crypto';
import type { AuditEvent } from '@idgate/schema';

/** What events keep of address, user agent and email: as is, an HMAC of them, or nothing. */
export type PersonalDataPolicy = 'keep' | 'hash' | 'omit';

// Fields of `admin.changed` before/after that hold an email address.
const EMAIL_KEYS = new Set(['email']);

/**
 * What an event is stored as under `policy`: address, user agent and every email (in the
 * before/after of an admin change) kept, replaced by `hmac-sha256:<base64url>` under a key derived
 * from the server secret — the same address gives the same value in every event, so they still
 * correlate, but cannot be read back — or set to null. Applied before an event is stored, so the
 * database and the JSON-lines stream never hold what was switched off.
 */
export function personalDataFilter(
  policy: PersonalDataPolicy,
  secret: string,
): (events: readonly AuditEvent[]) => AuditEvent[] {
  if (policy === 'keep') return (events) => [...events];
  // A key of its own, so an audit hash says nothing about anything else sealed with the secret.
  const key = createHmac('sha256', secret).update('idgate audit personal data v1').digest();
  const hide = (value: string | null): string | null => {
    if (value === null || policy === 'omit') return null;
    return `hmac-sha256:${createHmac('sha256', key).update(value).digest('base64url')}`;
  };
  const hideEmails = (record: Record<string, unknown> | null) =>
    record === null
      ? null
      : Object.fromEntries(
          Object.entries(record).map(([name, value]) =>
            EMAIL_KEYS.has(name) && (typeof value === 'string' || value === null)
              ? [name, hide(value)]
              : [name, value],
          ),
        );
  return (events) =>
    events.map((event) => {
      const hidden = { ...event, address: hide(event.address), userAgent: hide(event.userAgent) };
      if (hidden.type !== 'admin.changed') return hidden;
      const { before, after } = hidden.details;
      return {
        ...hidden,
        details: { ...hidden.details, before: hideEmails(before), after: hideEmails(after) },
      } as AuditEvent;
    });
}
