import { createHmac } from 'node:crypto';
import type { AuditActor, AuditEvent } from '@idgate/schema';

/** What events keep of personal data: as is, an HMAC of it, or nothing. */
export type PersonalDataPolicy = 'keep' | 'hash' | 'omit';

// Fields of `admin.changed` before/after that hold personal data: a user's names and email, an
// external identity's subject at its provider (an LDAP DN names the person).
const PERSONAL_KEYS = new Set(['username', 'email', 'displayName', 'subject']);

type Json = NonNullable<Extract<AuditEvent, { type: 'admin.changed' }>['details']['before']>[string];

/**
 * What an event is stored as under `policy`. Personal data is: the address and the user agent
 * (and the addresses an `address.unblocked` lifted: hashed, or the list emptied);
 * the name of a `user` actor (the username typed or signed in with, often an email); the
 * `username` of sign-in and lockout events; the username, email and display name in the
 * before/after of an admin change, and an external identity's subject (also in the `objectId` of
 * an identity, `provider:subject`, whose provider stays). Each is kept, replaced by
 * `hmac-sha256:<base64url>` under a key derived from the server secret — the same value gives the
 * same hash in every event and every field, so events still correlate, but it cannot be read
 * back — or removed (null; an actor's name left out; an identity's objectId `provider:`).
 * Applied before an event is stored, so the database and the JSON-lines stream never hold what
 * was switched off. Ids (the subject's user id, client ids, API key ids and prefixes) stay.
 */
export function personalDataFilter(
  policy: PersonalDataPolicy,
  secret: string,
): (events: readonly AuditEvent[]) => AuditEvent[] {
  if (policy === 'keep') return (events) => [...events];
  // A key of its own, so an audit hash says nothing about anything else sealed with the secret.
  const key = createHmac('sha256', secret).update('idgate audit personal data v1').digest();
  const hash = (value: string) =>
    `hmac-sha256:${createHmac('sha256', key).update(value).digest('base64url')}`;
  const hide = (value: string | null): string | null =>
    value === null || policy === 'omit' ? null : hash(value);
  // A personal field's value is a string, or (none today) a list or object of them: all hidden.
  const hideJson = (value: Json): Json => {
    if (value === null || policy === 'omit') return null;
    if (typeof value === 'string') return hash(value);
    if (Array.isArray(value)) return value.map(hideJson);
    if (typeof value === 'object')
      return Object.fromEntries(Object.entries(value).map(([name, inner]) => [name, hideJson(inner)]));
    return value;
  };
  const hideFields = (record: Record<string, Json> | null) =>
    record === null
      ? null
      : Object.fromEntries(
          Object.entries(record).map(([name, value]) =>
            PERSONAL_KEYS.has(name) ? [name, hideJson(value)] : [name, value],
          ),
        );
  const hideActor = (actor: AuditActor): AuditActor => {
    if (actor.kind !== 'user' || actor.name === undefined) return actor;
    const { name, ...rest } = actor;
    return policy === 'omit' ? rest : { ...rest, name: hash(name) };
  };
  const hideIdentityId = (objectId: string): string => {
    const colon = objectId.indexOf(':');
    if (colon === -1) return policy === 'omit' ? '' : hash(objectId);
    return `${objectId.slice(0, colon + 1)}${policy === 'omit' ? '' : hash(objectId.slice(colon + 1))}`;
  };
  return (events) =>
    events.map((event): AuditEvent => {
      const hidden = {
        ...event,
        actor: hideActor(event.actor),
        address: hide(event.address),
        userAgent: hide(event.userAgent),
      } as AuditEvent;
      switch (hidden.type) {
        case 'sign-in.succeeded':
        case 'sign-in.failed':
        case 'sign-in.locked':
        case 'lockout.started':
          return {
            ...hidden,
            details: { ...hidden.details, username: hide(hidden.details.username) },
          } as AuditEvent;
        case 'address.unblocked': {
          const addresses = hidden.details.addresses.map((address) => hide(address));
          return {
            ...hidden,
            details: { ...hidden.details, addresses: addresses.filter((a): a is string => a !== null) },
          };
        }
        case 'admin.changed': {
          const { details } = hidden;
          return {
            ...hidden,
            details: {
              ...details,
              objectId:
                details.objectKind === 'identity' ? hideIdentityId(details.objectId) : details.objectId,
              before: hideFields(details.before),
              after: hideFields(details.after),
            },
          };
        }
        default:
          return hidden;
      }
    });
}
