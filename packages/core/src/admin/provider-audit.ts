import { IDENTITY_PROVIDER_SECRETS } from '@idgate/schema';
import { recordObjectChange } from '../audit/admin.js';
import type { IdentityProviderRecord } from '../model.js';
import type { AdminPorts } from './ports.js';

const SECRETS: ReadonlySet<string> = new Set(IDENTITY_PROVIDER_SECRETS);

/** A stored provider's settings as an event may show them: sealed secrets never among them. */
function settingsOf(record: IdentityProviderRecord | null): Record<string, unknown> | null {
  if (record === null) return null;
  const settings = Object.fromEntries(Object.entries(record.config).filter(([field]) => !SECRETS.has(field)));
  return { ...settings, disabled: record.disabled };
}

/**
 * Records an `admin.changed` event of an identity provider (in `storage`'s transaction): the
 * settings that differ between `before` and `after`, secrets (`clientSecret`, `bindPassword`,
 * anything secret-named) dropped — a rotated secret shows only as the `rotate-secret` operation.
 */
export function recordProviderChange(
  storage: AdminPorts['storage'],
  ports: Pick<AdminPorts, 'clock' | 'auditActor'>,
  before: IdentityProviderRecord | null,
  after: IdentityProviderRecord | null,
  operation?: string,
): Promise<void> {
  const was = settingsOf(before);
  const is = settingsOf(after);
  const fields = [...new Set([...Object.keys(was ?? {}), ...Object.keys(is ?? {})])];
  return recordObjectChange(
    storage,
    ports,
    {
      objectKind: 'identity-provider',
      objectId: (after ?? before)?.name ?? '',
      ...(operation === undefined ? {} : { operation }),
    },
    was,
    is,
    fields,
  );
}
