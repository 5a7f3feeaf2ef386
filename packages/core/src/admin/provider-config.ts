import {
  describeFirstIssue,
  IDENTITY_PROVIDER_SECRETS,
  IdentityProvider,
  IdentityProviderConfig,
} from '@idgate/schema';
import { openText, sealText } from '../keys/seal.js';
import type { IdentityProviderRecord } from '../model.js';
import { etagOf } from './etag.js';

/** What a secret field shows once stored: that it is set, never its value. */
export const SECRET_PLACEHOLDER = '[set]';

/** Where an identity provider comes from: the configuration file (read-only) or storage. */
export type IdentityProviderSource = IdentityProvider['source'];

/** The sealing context of one secret field: a sealed value cannot be moved to another provider or field. */
const contextOf = (name: string, field: string) => `idp:${name}:${field}`;

/** `config` with each secret field present replaced by what `replace` makes of it. */
async function mapSecrets(
  config: Record<string, unknown>,
  replace: (value: unknown, field: string) => unknown,
): Promise<Record<string, unknown>> {
  const mapped: Record<string, unknown> = { ...config };
  for (const field of IDENTITY_PROVIDER_SECRETS) {
    if (mapped[field] !== undefined) mapped[field] = await replace(mapped[field], field);
  }
  return mapped;
}

/** `config` with each secret field present shown as set. */
function hideSecrets(config: Record<string, unknown>): Record<string, unknown> {
  const shown: Record<string, unknown> = { ...config };
  for (const field of IDENTITY_PROVIDER_SECRETS) {
    if (shown[field] !== undefined) shown[field] = SECRET_PLACEHOLDER;
  }
  return shown;
}

/**
 * The configuration as storage keeps it: each secret field sealed with `secret` (AES-256-GCM,
 * bound to the provider and the field).
 * @example const stored = await sealProviderConfig(IdentityProviderConfig.parse(input), keyPolicy.secret);
 */
export function sealProviderConfig(
  config: IdentityProviderConfig,
  secret: string,
): Promise<Record<string, unknown>> {
  return mapSecrets(config, (value, field) =>
    typeof value === 'string' ? sealText(value, secret, contextOf(config.name, field)) : value,
  );
}

/**
 * The configuration as storage keeps it after a change: the secret fields named in `rotated`
 * sealed anew with `secret`, every other one kept as `stored` holds it (sealed, never opened).
 * @example const sealed = await resealProviderConfig(config, record.config, new Set(['clientSecret']), keyPolicy.secret);
 */
export function resealProviderConfig(
  config: IdentityProviderConfig,
  stored: Readonly<Record<string, unknown>>,
  rotated: ReadonlySet<string>,
  secret: string,
): Promise<Record<string, unknown>> {
  return mapSecrets(config, (value, field) =>
    rotated.has(field) && typeof value === 'string'
      ? sealText(value, secret, contextOf(config.name, field))
      : stored[field],
  );
}

/**
 * The configuration of a stored provider, its secrets opened and the whole validated again. The
 * record's columns win over what the JSON says: its name, its type and whether it is disabled.
 * @throws Error naming the provider when a secret cannot be opened or the configuration is not valid.
 * @example const config = await openProviderConfig(record, keyPolicy.secret);
 */
export async function openProviderConfig(
  record: IdentityProviderRecord,
  secret: string,
): Promise<IdentityProviderConfig> {
  const opened = await mapSecrets(record.config, (value, field) => {
    if (typeof value !== 'string') throw invalid(record.name, `${field} is not a sealed text`);
    return openText(value, secret, contextOf(record.name, field));
  });
  return checkStored(record, opened);
}

/**
 * A stored provider as listed, without opening its secrets: a sealed value only shows as set, so
 * a listing works even when a secret cannot be opened any more.
 * @throws Error when the stored configuration is not valid.
 * @example describeStoredProvider(record).config.clientSecret // '[set]'
 */
export function describeStoredProvider(record: IdentityProviderRecord): IdentityProvider {
  return describeIdentityProvider(
    checkStored(record, hideSecrets(record.config)),
    'database',
    record.createdAt,
    record.updatedAt,
  );
}

/**
 * A provider as listed (`IdentityProvider`): its configuration with every secret field replaced by
 * `"[set]"`, and its `etag` over every other field (`updatedAt` included, so that a rotated
 * secret, which shows only as `"[set]"`, changes it too).
 * @example describeIdentityProvider(config, 'config', null, null)
 */
export function describeIdentityProvider(
  config: IdentityProviderConfig,
  source: IdentityProviderSource,
  createdAt: Date | null,
  updatedAt: Date | null,
): IdentityProvider {
  const fields = {
    name: config.name,
    type: config.type,
    source,
    config: hideSecrets(config),
    createdAt: createdAt?.toISOString() ?? null,
    updatedAt: updatedAt?.toISOString() ?? null,
  };
  return IdentityProvider.parse({ ...fields, etag: etagOf(fields) });
}

/** `config` with the record's columns, validated. */
function checkStored(
  record: IdentityProviderRecord,
  config: Record<string, unknown>,
): IdentityProviderConfig {
  const result = IdentityProviderConfig.safeParse({
    ...config,
    name: record.name,
    type: record.type,
    disabled: record.disabled,
  });
  if (!result.success) throw invalid(record.name, describeFirstIssue(result.error));
  return result.data;
}

function invalid(name: string, why: string): Error {
  return new Error(`stored identity provider ${name} is not valid: ${why}`);
}
