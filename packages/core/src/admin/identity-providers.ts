import {
  DEVICE_CODE_GRANT_TYPE,
  type DescribeIssueOptions,
  type GrantType,
  IDENTITY_PROVIDER_SECRETS,
  type IdentityProvider,
  IdentityProviderConfig,
  IdentityProviderName,
} from '@idgate/schema';
import type { IdentityProviderRecord } from '../model.js';
import type { Storage } from '../ports/storage.js';
import { AdminError, parseAdminInput, refusingConflicts } from './errors.js';
import { checkIfMatch } from './etag.js';
import { type AdminPorts, nowOf } from './ports.js';
import { recordProviderChange } from './provider-audit.js';
import {
  describeIdentityProvider,
  describeStoredProvider,
  type IdentityProviderSource,
  resealProviderConfig,
  sealProviderConfig,
} from './provider-config.js';

/** How fields are named in a refusal (`label`), as in `DescribeIssueOptions`. */
type FieldNames = Omit<DescribeIssueOptions, 'input' | 'secrets'>;

type Ports = Pick<AdminPorts, 'storage' | 'declaredProviders' | 'auditActor'>;

/** The provider the configuration file declares as `name` (any case). */
const declared = (ports: Pick<Ports, 'declaredProviders'>, name: string) =>
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
    describeIdentityProvider(config, 'config', null, null),
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
  if (file !== undefined) return describeIdentityProvider(file, 'config', null, null);
  const record = await findStored(ports.storage, name);
  if (record === undefined) throw notFound(name);
  return describeStoredProvider(record);
}

/**
 * Refuses a provider to be added whose name (`input.name`, as sent) is taken in any case, by a
 * stored provider or one the configuration file declares: what {@link addIdentityProvider}
 * checks before the configuration itself, so that a taken name is answered as taken even when
 * the rest of the input is not valid (or the name is not one a new provider could have: `GitHub`).
 * The admin API checks it before the route's schema does.
 * @throws AdminError `conflict`.
 * @example await refuseTakenProviderName(ports, request.body);
 */
export async function refuseTakenProviderName(ports: Ports, input: unknown): Promise<void> {
  const given = typeof input === 'object' && input !== null ? (input as { name?: unknown }).name : undefined;
  if (typeof given !== 'string' || given === '') return;
  const name = given.toLowerCase();
  if (declared(ports, name) !== undefined) throw fromFile('conflict', name);
  if ((await findStored(ports.storage, name)) !== undefined) throw taken(name);
}

/**
 * Stores an identity provider, its secrets sealed with the key policy's secret. A name taken in
 * any case (stored, or declared by the configuration file) is refused before the configuration
 * is checked; `options` name fields as the caller's user knows them (secrets are never quoted).
 * A `tokenClientId` must name a client users sign in to (see {@link checkTokenClient}).
 * @throws AdminError `conflict` for a taken name; `invalid_input` naming the first bad field.
 * @example const provider = await addIdentityProvider(ports, { type: 'github', name: 'github', clientId: 'x', clientSecret: 's' });
 */
export async function addIdentityProvider(
  ports: Ports & Pick<AdminPorts, 'clock' | 'keyPolicy'>,
  input: unknown,
  options: FieldNames = {},
): Promise<IdentityProvider> {
  await refuseTakenProviderName(ports, input);
  const config = parseAdminInput(IdentityProviderConfig, input, 'identity_provider', {
    ...options,
    secrets: IDENTITY_PROVIDER_SECRETS,
  });
  await checkTokenClient(ports.storage, config, options);
  const now = nowOf(ports);
  const sealed = await sealProviderConfig(config, ports.keyPolicy.secret);
  const record = await refusingConflicts(
    () =>
      ports.storage.transaction(async (tx) => {
        const created = await tx.identityProviders.create({
          name: config.name,
          type: config.type,
          config: sealed,
          disabled: config.disabled,
          createdAt: now,
          updatedAt: now,
        });
        await recordProviderChange(tx, ports, null, created);
        return created;
      }),
    () => taken(config.name),
  );
  return describeIdentityProvider(config, 'database', record.createdAt, record.updatedAt);
}

/** Grant types through which a user signs in: a token client must have one of them. */
const USER_GRANTS: ReadonlySet<GrantType> = new Set<GrantType>([
  'authorization_code',
  'password',
  DEVICE_CODE_GRANT_TYPE,
]);

/**
 * Refuses a `tokenClientId` that cannot take the tokens of a sign-in answered straight from the
 * callback: the client must exist and be one users sign in to (an authorization code, password
 * or device grant), not a machine client with only `client_credentials`. Checked when the
 * provider is added or changed, not after a user went through the whole upstream sign-in.
 * @throws AdminError `invalid_input` naming the field and the reason.
 */
async function checkTokenClient(
  storage: Pick<Storage, 'clients'>,
  config: IdentityProviderConfig,
  options: FieldNames,
): Promise<void> {
  const clientId = config.tokenClientId;
  if (clientId === undefined) return;
  const field = options.label?.('tokenClientId') ?? 'tokenClientId';
  const shown = JSON.stringify(clientId.slice(0, 64));
  const client = await storage.clients.findById(clientId);
  if (client === undefined) {
    throw new AdminError(
      'invalid_input',
      'identity_provider',
      `${field} ${shown}: there is no such client; name an existing client that users sign in to (e.g. kubectl's)`,
    );
  }
  if (!client.grantTypes.some((grant) => USER_GRANTS.has(grant))) {
    throw new AdminError(
      'invalid_input',
      'identity_provider',
      `${field} ${shown}: the client has none of the grant types users sign in with (authorization_code, password, device code), so it cannot take the tokens of a sign-in`,
    );
  }
}

function taken(name: string): AdminError {
  return new AdminError('conflict', 'identity_provider', `identity provider ${name} already exists`, {
    key: name,
  });
}

/** Fields of a stored provider that an update cannot change: identities are keyed by the name. */
const FIXED = ['name', 'type'] as const;

/**
 * Refuses a change of the provider `name` that {@link updateIdentityProvider} refuses before it
 * reads anything: a provider of the configuration file (read-only here), then a patch that is not
 * a JSON object. The admin API checks it before the route's schema does, so that these come first.
 * @throws AdminError `read_only`; `invalid_input`.
 * @example refuseProviderPatch(ports, 'corp', request.body, { label: (path) => path || 'body' });
 */
export function refuseProviderPatch(
  ports: Pick<Ports, 'declaredProviders'>,
  name: string,
  patch: unknown,
  options: FieldNames = {},
): asserts patch is Record<string, unknown> {
  if (declared(ports, name) !== undefined) throw fromFile('read_only', name.toLowerCase());
  if (!isObject(patch)) {
    const label = options.label?.('') ?? 'the change';
    throw new AdminError(
      'invalid_input',
      'identity_provider',
      `${label} must be a JSON object of the fields to change`,
    );
  }
}

/**
 * Changes a stored provider's settings with a JSON merge patch (RFC 7396) of its configuration:
 * fields given replace the stored ones, nested objects merge, `null` removes an optional field.
 * The merged configuration is checked exactly as {@link addIdentityProvider} checks a new one
 * (its token client included); a secret given (`clientSecret`, `bindPassword`) is a rotation,
 * sealed anew, while secrets not given stay sealed as they are, never opened. The name and type
 * stay (a patch may repeat them), so the identities linked through the provider keep working.
 * `ifMatch` is checked against the provider's `etag` in the same transaction as the write.
 * @throws AdminError `read_only` for a provider of the configuration file; `not_found`;
 * `precondition_failed` for a stale `ifMatch`; `invalid_input` naming the first bad field.
 * @example const provider = await updateIdentityProvider(ports, 'corp', { clientSecret: 'rotated' }, { ifMatch: etag });
 */
export async function updateIdentityProvider(
  ports: Ports & Pick<AdminPorts, 'clock' | 'keyPolicy'>,
  name: string,
  patch: unknown,
  options: FieldNames & { ifMatch?: string | undefined } = {},
): Promise<IdentityProvider> {
  refuseProviderPatch(ports, name, patch, options);
  const label = (path: string) => options.label?.(path) ?? (path || 'the change');
  return ports.storage.transaction(async (tx) => {
    const record = await findStored(tx, name);
    if (record === undefined) throw notFound(name);
    checkIfMatch(options.ifMatch, describeStoredProvider(record).etag, 'identity_provider', record.name);
    for (const field of FIXED) {
      const value = patch[field];
      if (value !== undefined && (typeof value !== 'string' || value.toLowerCase() !== record[field])) {
        throw new AdminError(
          'invalid_input',
          'identity_provider',
          `${label(field)} cannot be changed (identities are linked by the provider's name and type): remove the provider and add a new one instead`,
        );
      }
    }
    const rotated = new Set(IDENTITY_PROVIDER_SECRETS.filter((field) => typeof patch[field] === 'string'));
    // Secrets kept are checked as present, not by their sealed text (longer than a secret may be).
    const base: Record<string, unknown> = { ...record.config };
    for (const field of IDENTITY_PROVIDER_SECRETS) if (base[field] !== undefined) base[field] = 'kept';
    const changes = Object.fromEntries(
      Object.entries(patch).filter(([field]) => !(FIXED as readonly string[]).includes(field)),
    );
    const merged = mergePatch(
      { ...base, name: record.name, type: record.type, disabled: record.disabled },
      changes,
    );
    const config = parseAdminInput(IdentityProviderConfig, merged, 'identity_provider', {
      ...options,
      secrets: IDENTITY_PROVIDER_SECRETS,
    });
    await checkTokenClient(tx, config, options);
    const sealed = await resealProviderConfig(config, record.config, rotated, ports.keyPolicy.secret);
    // Strictly later than the last change: a server's connector cache is keyed by this stamp.
    const at = new Date(Math.max(nowOf(ports).getTime(), record.updatedAt.getTime() + 1));
    const updated = await tx.identityProviders.update(record.name, {
      config: sealed,
      disabled: config.disabled,
      updatedAt: at,
    });
    if (updated === undefined) throw notFound(name);
    await recordProviderChange(tx, ports, record, updated, rotated.size > 0 ? 'rotate-secret' : undefined);
    return describeStoredProvider(updated);
  });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * `patch` applied to `target` (RFC 7396 §2): objects merge key by key, `null` removes a key, and
 * anything else replaces. Built with `Object.fromEntries`, so a `__proto__` key stays a plain
 * (and refused) field.
 */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  const merged = new Map(Object.entries(isObject(target) ? target : {}));
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) merged.delete(key);
    else merged.set(key, mergePatch(merged.get(key), value));
  }
  return Object.fromEntries(merged);
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
  return ports.storage.transaction(async (tx) => {
    const record = await findStored(tx, name);
    if (record === undefined) throw notFound(name);
    if (record.disabled === disabled) return { provider: describeStoredProvider(record), changed: false };
    const updated = await tx.identityProviders.setDisabled(record.name, disabled, nowOf(ports));
    if (updated === undefined) throw notFound(name);
    await recordProviderChange(tx, ports, record, updated, disabled ? 'disable' : 'enable');
    return { provider: describeStoredProvider(updated), changed: true };
  });
}

/**
 * Deletes a stored provider and every identity linked through it; `unlinked` says how many.
 * @throws AdminError `read_only` for a provider of the configuration file; `not_found`.
 * @example const { name, unlinked } = await removeIdentityProvider(ports, 'GitHub');
 */
export async function removeIdentityProvider(
  ports: Ports & Pick<AdminPorts, 'clock'>,
  name: string,
): Promise<{ name: string; unlinked: number }> {
  if (declared(ports, name) !== undefined) throw fromFile('read_only', name.toLowerCase());
  return ports.storage.transaction(async (tx) => {
    const record = await findStored(tx, name);
    if (record === undefined) throw notFound(name);
    const unlinked = await tx.identities.countByProvider(record.name);
    if (!(await tx.identityProviders.remove(record.name))) throw notFound(name);
    await recordProviderChange(tx, ports, record, null);
    return { name: record.name, unlinked };
  });
}
