import { type IdentityProviderRecord, openText, sealText } from '@idgate/core';
import { IDENTITY_PROVIDER_SECRETS, IdentityProvider, IdentityProviderConfig } from '@idgate/schema';

/** What a secret field shows once stored: that it is set, never its value. */
export const SECRET_PLACEHOLDER = '[set]';

/** The sealing context of one secret field: a sealed value cannot be moved to another provider or field. */
const contextOf = (name: string, field: string) => `idp:${name}:${field}`;

/**
 * The configuration as the database keeps it: each secret field present sealed with `secret`.
 * @example const config = await toStoredConfig(IdentityProviderConfig.parse(input), services.keyPolicy.secret);
 */
export async function toStoredConfig(
  config: IdentityProviderConfig,
  secret: string,
): Promise<Record<string, unknown>> {
  const stored: Record<string, unknown> = { ...config };
  for (const field of IDENTITY_PROVIDER_SECRETS) {
    const value = stored[field];
    if (typeof value === 'string')
      stored[field] = await sealText(value, secret, contextOf(config.name, field));
  }
  return stored;
}

/**
 * The configuration of a stored provider, its secrets opened and the whole validated again. The
 * record's columns win over what the JSON says: its name, its type and whether it is disabled.
 * @throws Error naming the provider when a secret cannot be opened or the configuration is not valid.
 * @example const config = await fromStoredConfig(record, services.keyPolicy.secret);
 */
export async function fromStoredConfig(
  record: IdentityProviderRecord,
  secret: string,
): Promise<IdentityProviderConfig> {
  const opened: Record<string, unknown> = { ...record.config };
  for (const field of IDENTITY_PROVIDER_SECRETS) {
    const value = opened[field];
    if (value === undefined) continue;
    if (typeof value !== 'string') throw invalid(record.name, `${field} is not a sealed text`);
    opened[field] = await openText(value, secret, contextOf(record.name, field));
  }
  const result = IdentityProviderConfig.safeParse({
    ...opened,
    name: record.name,
    type: record.type,
    disabled: record.disabled,
  });
  if (!result.success) {
    const issue = result.error.issues[0];
    const where = issue === undefined || issue.path.length === 0 ? '' : `${issue.path.join('.')}: `;
    throw invalid(record.name, `${where}${issue?.message ?? 'is not valid'}`);
  }
  return result.data;
}

/**
 * A provider as listed (`IdentityProvider`): its configuration with every secret field replaced by
 * `"[set]"`.
 * @example describeProvider(config, 'database', record.createdAt)
 */
export function describeProvider(
  config: IdentityProviderConfig,
  source: 'config' | 'database',
  createdAt: Date | null,
): IdentityProvider {
  const shown: Record<string, unknown> = { ...config };
  for (const field of IDENTITY_PROVIDER_SECRETS) {
    if (shown[field] !== undefined) shown[field] = SECRET_PLACEHOLDER;
  }
  return IdentityProvider.parse({
    name: config.name,
    type: config.type,
    source,
    config: shown,
    createdAt: createdAt?.toISOString() ?? null,
  });
}

function invalid(name: string, why: string): Error {
  return new Error(`stored identity provider ${name} is not valid: ${why}`);
}
