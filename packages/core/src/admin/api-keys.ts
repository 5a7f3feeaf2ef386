import {
  type ApiKey,
  CreateApiKeyInput,
  type CreatedApiKey,
  type DescribeIssueOptions,
  type PageQuery,
} from '@idgate/schema';
import { generateApiKey } from '../api-keys/api-key.js';
import { recordAdminChange, recordObjectChange } from '../audit/admin.js';
import type { ApiKeyCluster, ApiKeyRecord } from '../model.js';
import type { AuditEventRepository } from '../ports/audit-storage.js';
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
/** A new API key's record and the key itself, which only the caller ever sees. */
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
    scopes: input.scopes,
    cluster,
    createdAt: now,
    lastUsedAt: null,
    expiresAt: input.expiresIn === undefined ? null : new Date(now.getTime() + input.expiresIn * 1000),
    revokedAt: null,
  };
  return { record, key: generated.key };
}

/**
 * Creates an API key; `key` is returned to be shown once, storage keeps its prefix and a hash.
 * With `expiresIn` (seconds) the key stops working that long from now.
 * @throws AdminError `conflict` in the practically impossible case that the generated prefix exists.
 * @example const { record, key } = await createApiKey(ports, { name: 'apiserver', scopes: ['tokenreview'] });
 */
export async function createApiKey(
  ports: Pick<AdminPorts, 'storage' | 'clock' | 'auditActor'>,
  input: CreateApiKeyInput,
): Promise<{ record: ApiKeyRecord; key: string }> {
  const { record, key } = await prepareApiKey(ports, input);
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
 * Creates an API key from an admin request body (`{ name, scopes, expiresIn? }`), answering its
 * view with the key itself, to be shown once.
 * @throws AdminError `invalid_input` naming the first bad field.
 * @example const { key, expiresAt } = await createApiKeyFromInput(ports, { name: 'ci', scopes: ['admin'], expiresIn: 86400 });
 */
export async function createApiKeyFromInput(
  ports: Pick<AdminPorts, 'storage' | 'clock'>,
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
