import {
  type DescribeIssueOptions,
  IDENTITY_PROVIDER_SECRETS,
  type IdentityProvider,
  IdentityProviderConfig,
  IdentityProviderName,
} from '@idgate/schema';
import type { IdentityProviderRecord } from '../model.js';
import type { Storage } from '../ports/storage.js';
import { AdminError, parseAdminInput, refusingConflicts } from './errors.js';
import { type AdminPorts, nowOf } from './ports.js';
import {
  describeIdentityProvider,
  describeStoredProvider,
  type IdentityProviderSource,
  sealProviderConfig,
} from './provider-config.js';

type Ports = Pick<AdminPorts, 'storage' | 'declaredProviders'>;

/** The provider the configuration file declares as `name` (any case). */
const declared = (ports: Ports, name: string) =>
  ports.declaredProviders?.find((provider) => provider.name === name.toLowerCase());

/** The stored provider called `name` (any case); a name no provider can have is not looked up. */
const findStored = (storage: Storage, name: string): Promise<IdentityProviderRecord | undefined> =>
  IdentityProviderName.safeParse(name.toLowerCase()).success
    ? storage.identityProviders.findByName(name)
    : Promise.resolve(undefined);

const notFound = (name: string) =>
  new AdminError('not_found', 'identity_provider', `no identity provider ${name} in the database`, {
    key: name,
  });

/** A provider of the configuration file: it wins a name clash, and is changed there. */
const fromFile = (code: 'read_only' | 'conflict', name: string) =>
  new AdminError(
    code,
    'identity_provider',
    `identity provider ${name} is declared in the configuration file: change it there`,
    { key: name },
  );

/**
 * The identity providers, as listed (secrets show as `"[set]"`, and are not opened): by default
 * those the configuration file declares, then the stored ones it does not shadow, by name; with
 * `source`, only those of the file, or every stored one.
 * @throws Error when a stored configuration is not valid.
 * @example const { length } = await listIdentityProviders(ports, { source: 'database' });
 */
export async function listIdentityProviders(
  ports: Ports,
  options: { source?: IdentityProviderSource } = {},
): Promise<IdentityProvider[]> {
  const file = (ports.declaredProviders ?? []).map((config) =>
    describeIdentityProvider(config, 'config', null),
  );
  if (options.source === 'config') return file;
  const stored = await ports.storage.identityProviders.list();
  if (options.source === 'database') return stored.map(describeStoredProvider);
  return [...file, ...stored.filter((record) => !declared(ports, record.name)).map(describeStoredProvider)];
}

/**
 * The provider called `name` (any case), declared or stored.
 * @throws AdminError `not_found`.
 * @example const provider = await getIdentityProvider(ports, 'GitHub');
 */
export async function getIdentityProvider(ports: Ports, name: string): Promise<IdentityProvider> {
  const file = declared(ports, name);
  if (file !== undefined) return describeIdentityProvider(file, 'config', null);
  const record = await findStored(ports.storage, name);
  if (record === undefined) throw notFound(name);
  return describeStoredProvider(record);
}

/**
 * Stores an identity provider, its secrets sealed with the key policy's secret. A name taken in
 * any case (stored, or declared by the configuration file) is refused before the configuration
 * is checked; `options` name fields as the caller's user knows them (secrets are never quoted).
 * @throws AdminError `conflict` for a taken name; `invalid_input` naming the first bad field.
 * @example const provider = await addIdentityProvider(ports, { type: 'github', name: 'github', clientId: 'x', clientSecret: 's' });
 */
export async function addIdentityProvider(
  ports: Ports & Pick<AdminPorts, 'clock' | 'keyPolicy'>,
  input: unknown,
  options: Omit<DescribeIssueOptions, 'input' | 'secrets'> = {},
): Promise<IdentityProvider> {
  const given = typeof input === 'object' && input !== null ? (input as { name?: unknown }).name : undefined;
  if (typeof given === 'string' && given !== '') {
    const name = given.toLowerCase();
    if (declared(ports, name) !== undefined) throw fromFile('conflict', name);
    if ((await findStored(ports.storage, name)) !== undefined) throw taken(name);
  }
  const config = parseAdminInput(IdentityProviderConfig, input, 'identity_provider', {
    ...options,
    secrets: IDENTITY_PROVIDER_SECRETS,
  });
  const now = nowOf(ports);
  const sealed = await sealProviderConfig(config, ports.keyPolicy.secret);
  const record = await refusingConflicts(
    () =>
      ports.storage.identityProviders.create({
        name: config.name,
        type: config.type,
        config: sealed,
        disabled: config.disabled,
        createdAt: now,
        updatedAt: now,
      }),
    () => taken(config.name),
  );
  return describeIdentityProvider(config, 'database', record.createdAt);
}

function taken(name: string): AdminError {
  return new AdminError('conflict', 'identity_provider', `identity provider ${name} already exists`, {
    key: name,
  });
}

/**
 * Stops offering a stored provider for sign-in (`disabled` true), or offers it again; `changed`
 * is false when it was so already.
 * @throws AdminError `read_only` for a provider of the configuration file; `not_found`.
 * @example const { provider, changed } = await setIdentityProviderDisabled(ports, 'github', true);
 */
export async function setIdentityProviderDisabled(
  ports: Ports & Pick<AdminPorts, 'clock'>,
  name: string,
  disabled: boolean,
): Promise<{ provider: IdentityProvider; changed: boolean }> {
  if (declared(ports, name) !== undefined) throw fromFile('read_only', name.toLowerCase());
  const record = await findStored(ports.storage, name);
  if (record === undefined) throw notFound(name);
  if (record.disabled === disabled) return { provider: describeStoredProvider(record), changed: false };
  const updated = await ports.storage.identityProviders.setDisabled(record.name, disabled, nowOf(ports));
  if (updated === undefined) throw notFound(name);
  return { provider: describeStoredProvider(updated), changed: true };
}

/**
 * Deletes a stored provider and every identity linked through it; `unlinked` says how many.
 * @throws AdminError `read_only` for a provider of the configuration file; `not_found`.
 * @example const { name, unlinked } = await removeIdentityProvider(ports, 'GitHub');
 */
export async function removeIdentityProvider(
  ports: Ports,
  name: string,
): Promise<{ name: string; unlinked: number }> {
  if (declared(ports, name) !== undefined) throw fromFile('read_only', name.toLowerCase());
  return ports.storage.transaction(async (tx) => {
    const record = await findStored(tx, name);
    if (record === undefined) throw notFound(name);
    const unlinked = await tx.identities.countByProvider(record.name);
    if (!(await tx.identityProviders.remove(record.name))) throw notFound(name);
    return { name: record.name, unlinked };
  });
}
