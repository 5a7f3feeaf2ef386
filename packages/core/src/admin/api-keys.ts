import {
  type ApiKey,
  type ApiKeyScope,
  CreateApiKeyInput,
  type CreatedApiKey,
  type DescribeIssueOptions,
  type PageQuery,
  type UpdateApiKeyInput,
} from '@idgate/schema';
import { generateApiKey, lacksScope } from '../api-keys/api-key.js';
import { apiKeyScopes, missingScope } from '../api-keys/scopes.js';
import { recordAdminChange, recordObjectChange } from '../audit/admin.js';
import type { ApiKeyCluster, ApiKeyRecord } from '../model.js';
import type { AuditEventRepository } from '../ports/audit-storage.js';
import type { Storage } from '../ports/storage.js';
import { AdminError, parseAdminInput, refusingConflicts } from './errors.js';
import { decodeKeysetCursor, encodeKeysetCursor } from './keyset-cursor.js';
import { type AdminPorts, nowOf } from './ports.js';
import { apiKeyView } from './views.js';

/** The `admin.changed` event of an API key created (its public prefix, never the key or its hash). */
export function recordApiKeyCreated(
  storage: { auditEvents: AuditEventRepository },
  ports: Pick<AdminPorts, 'clock' | 'auditActor'>,
  key: ApiKeyRecord,
): Promise<void> {
  return recordObjectChange(storage, ports, { objectKind: 'api-key', objectId: key.id }, null, key, [
    'name',
    'prefix',
    'scopes',
    'expiresAt',
  ]);
}
/** A new API key's record (its scopes and those of its roles) and the key itself, which only the caller ever sees. */
export async function prepareApiKey(
  ports: Pick<AdminPorts, 'clock' | 'random'>,
  input: CreateApiKeyInput,
  cluster: ApiKeyCluster | null = null,
): Promise<{ record: ApiKeyRecord; key: string }> {
  const generated = await generateApiKey(ports.random);
  const now = nowOf(ports);
  const record: ApiKeyRecord = {
    id: crypto.randomUUID(),
    name: input.name,
    prefix: generated.prefix,
    hash: generated.hash,
    scopes: apiKeyScopes(input),
    cluster,
    createdAt: now,
    lastUsedAt: null,
    expiresAt: input.expiresIn === undefined ? null : new Date(now.getTime() + input.expiresIn * 1000),
    revokedAt: null,
  };
  return { record, key: generated.key };
}

/**
 * Refuses an API key acting through `ports` that would give, or keep alive, a scope it does not
 * hold itself: no key makes a key stronger than itself. The CLI (no acting key) may give any.
 * @throws ApiKeyError `forbidden` (403) naming the first scope it lacks.
 */
function refuseEscalation(
  ports: Pick<AdminPorts, 'actingScopes'>,
  scopes: readonly ApiKeyScope[],
  what: string,
) {
  if (ports.actingScopes === undefined) return;
  const missing = missingScope(ports.actingScopes, scopes);
  if (missing !== undefined) throw lacksScope(missing, `, which ${what}`);
}

/**
 * Creates an API key with the scopes and those of the roles it is given; `key` is returned to be
 * shown once, storage keeps its prefix and a hash. With `expiresIn` (seconds) the key stops
 * working that long from now. A key acting through `ports` (the admin API's) gives only scopes it
 * holds itself.
 * @throws ApiKeyError `forbidden` naming a scope the acting key would give without holding it.
 * @throws AdminError `conflict` in the practically impossible case that the generated prefix exists.
 * @example const { record, key } = await createApiKey(ports, { name: 'apiserver', scopes: ['tokenreview'] });
 * @example const { record } = await createApiKey(ports, { name: 'desk', roles: ['helpdesk'] });
 */
export async function createApiKey(
  ports: Pick<AdminPorts, 'storage' | 'clock' | 'auditActor' | 'actingScopes'>,
  input: CreateApiKeyInput,
): Promise<{ record: ApiKeyRecord; key: string }> {
  const { record, key } = await prepareApiKey(ports, input);
  refuseEscalation(ports, record.scopes, 'the new key would have');
  const stored = await ports.storage.transaction(async (tx) => {
    const created = await refusingConflicts(
      () => tx.apiKeys.create(record),
      () => new AdminError('conflict', 'api_key', 'an API key with the generated prefix exists; try again'),
    );
    await recordApiKeyCreated(tx, ports, created);
    return created;
  });
  return { record: stored, key };
}

/**
 * Every API key, revoked ones included, by creation time (prefixes, never keys).
 * @example const keys = await listApiKeys(ports);
 */
export function listApiKeys(ports: Pick<AdminPorts, 'storage'>): Promise<ApiKeyRecord[]> {
  return ports.storage.apiKeys.list();
}

/** A key by its id, else by its prefix (as the repository's `revoke` finds one). */
async function findApiKey(storage: Storage, idOrPrefix: string): Promise<ApiKeyRecord | undefined> {
  return (await storage.apiKeys.findById(idOrPrefix)) ?? (await storage.apiKeys.findByPrefix(idOrPrefix));
}

/**
 * An API key by its id or its prefix, revoked and expired ones included (never the key or its hash
 * leaves: show it with `apiKeyView`).
 * @throws AdminError `not_found` when there is no such key.
 * @example const key = await getApiKey(ports, 'idg_ab12cd34');
 */
export async function getApiKey(
  ports: Pick<AdminPorts, 'storage'>,
  idOrPrefix: string,
): Promise<ApiKeyRecord> {
  const key = await findApiKey(ports.storage, idOrPrefix);
  if (key === undefined)
    throw new AdminError('not_found', 'api_key', `no API key ${idOrPrefix}`, { key: idOrPrefix });
  return key;
}

const TEN_YEARS_MS = 315_360_000_000;

/**
 * Renames an API key (by its id or prefix) or changes when it stops working: `expiresIn` seconds
 * from now, or `expiresAt` (null: never); its scopes never change. A key acting through `ports`
 * may shorten any key's life, but lengthen it (a later expiry, or none) only for a key whose
 * scopes it holds itself. Recorded as an `admin.changed` event with the fields that changed.
 * @throws AdminError `not_found` when there is no such live key (revoked keys stay as they are);
 * `invalid_input` for an expiry that is not ahead, or more than ten years ahead.
 * @throws ApiKeyError `forbidden` naming a scope of the key the acting key lacks, for a longer life.
 * @example const key = await updateApiKey(ports, 'idg_ab12cd34', { name: 'ci (2026)', expiresIn: 86400 });
 */
export async function updateApiKey(
  ports: Pick<AdminPorts, 'storage' | 'clock' | 'auditActor' | 'auditIds' | 'actingScopes'>,
  idOrPrefix: string,
  input: UpdateApiKeyInput,
): Promise<ApiKeyRecord> {
  const now = nowOf(ports);
  let expiresAt: Date | null | undefined;
  if (input.expiresIn !== undefined) expiresAt = new Date(now.getTime() + input.expiresIn * 1000);
  else if (input.expiresAt !== undefined) {
    expiresAt = input.expiresAt === null ? null : new Date(input.expiresAt);
    const ms = expiresAt?.getTime();
    if (ms !== undefined && (ms <= now.getTime() || ms > now.getTime() + TEN_YEARS_MS))
      throw new AdminError(
        'invalid_input',
        'api_key',
        `expiresAt "${input.expiresAt}": must be later than now and at most ten years ahead`,
      );
  }
  return ports.storage.transaction(async (tx) => {
    const key = await findApiKey(tx, idOrPrefix);
    if (key === undefined || key.revokedAt !== null)
      throw new AdminError('not_found', 'api_key', `no active API key ${idOrPrefix}`, { key: idOrPrefix });
    const was = key.expiresAt ?? null;
    const longer =
      expiresAt !== undefined && was !== null && (expiresAt === null || expiresAt.getTime() > was.getTime());
    if (longer) refuseEscalation(ports, key.scopes, 'the key it would keep working longer has');
    const changes = {
      ...(input.name === undefined ? {} : { name: input.name }),
      ...(expiresAt === undefined ? {} : { expiresAt }),
    };
    const updated = Object.keys(changes).length === 0 ? key : await tx.apiKeys.update(key.id, changes);
    if (updated === undefined)
      throw new AdminError('not_found', 'api_key', `no active API key ${idOrPrefix}`, { key: idOrPrefix });
    await recordObjectChange(tx, ports, { objectKind: 'api-key', objectId: key.id }, key, updated, [
      'name',
      'expiresAt',
    ]);
    return updated;
  });
}

/**
 * Revokes an API key by its id or its prefix.
 * @throws AdminError `not_found` when there is no such key, or it is revoked already.
 * @example await revokeApiKey(ports, 'idg_ab12cd34');
 */
export async function revokeApiKey(
  ports: Pick<AdminPorts, 'storage' | 'clock' | 'auditActor'>,
  idOrPrefix: string,
): Promise<void> {
  await ports.storage.transaction(async (tx) => {
    if (!(await tx.apiKeys.revoke(idOrPrefix, nowOf(ports))))
      throw new AdminError('not_found', 'api_key', `no active API key ${idOrPrefix}`, { key: idOrPrefix });
    await recordAdminChange(tx, ports, {
      objectKind: 'api-key',
      objectId: idOrPrefix,
      action: 'updated',
      operation: 'revoke',
    });
  });
}

/**
 * Creates an API key from an admin request body (`{ name, scopes?, roles?, expiresIn? }`),
 * answering its view with the key itself, to be shown once.
 * @throws AdminError `invalid_input` naming the first bad field.
 * @throws ApiKeyError `forbidden` naming a scope the acting key would give without holding it.
 * @example const { key, expiresAt } = await createApiKeyFromInput(ports, { name: 'ci', scopes: ['admin'], expiresIn: 86400 });
 */
export async function createApiKeyFromInput(
  ports: Pick<AdminPorts, 'storage' | 'clock' | 'actingScopes'>,
  input: unknown,
  options: Pick<DescribeIssueOptions, 'label'> = {},
): Promise<CreatedApiKey> {
  const { record, key } = await createApiKey(
    ports,
    parseAdminInput(CreateApiKeyInput, input, 'api_key', options),
  );
  return { ...apiKeyView(record), key };
}

/**
 * One page of API keys by creation time, revoked and expired ones included (prefixes, never
 * keys), read as one keyset query.
 * @throws AdminError `invalid_input` for a cursor this listing did not answer.
 * @example const { items, nextCursor } = await listApiKeyPage(ports, { limit: 100 });
 */
export async function listApiKeyPage(
  ports: Pick<AdminPorts, 'storage'>,
  query: PageQuery,
): Promise<{ items: ApiKey[]; nextCursor: string | null }> {
  const after = query.cursor === undefined ? undefined : decodeKeysetCursor(query.cursor, 'api_key');
  const rows = await ports.storage.apiKeys.listPage(query.limit + 1, after);
  const page = rows.slice(0, query.limit);
  const last = page.at(-1);
  return {
    items: page.map(apiKeyView),
    nextCursor: rows.length > query.limit && last !== undefined ? encodeKeysetCursor(last) : null,
  };
}
