import type { CreateApiKeyInput } from '@idgate/schema';
import { generateApiKey } from '../api-keys/api-key.js';
import type { ApiKeyCluster, ApiKeyRecord } from '../model.js';
import { AdminError, refusingConflicts } from './errors.js';
import { type AdminPorts, nowOf } from './ports.js';

/** A new API key's record and the key itself, which only the caller ever sees. */
export async function prepareApiKey(
  ports: Pick<AdminPorts, 'clock'>,
  input: CreateApiKeyInput,
  cluster: ApiKeyCluster | null = null,
): Promise<{ record: ApiKeyRecord; key: string }> {
  const generated = await generateApiKey();
  const record: ApiKeyRecord = {
    id: crypto.randomUUID(),
    name: input.name,
    prefix: generated.prefix,
    hash: generated.hash,
    scopes: input.scopes,
    cluster,
    createdAt: nowOf(ports),
    lastUsedAt: null,
    revokedAt: null,
  };
  return { record, key: generated.key };
}

/**
 * Creates an API key; `key` is returned to be shown once, storage keeps its prefix and a hash.
 * @throws AdminError `conflict` in the practically impossible case that the generated prefix exists.
 * @example const { record, key } = await createApiKey(ports, { name: 'apiserver', scopes: ['tokenreview'] });
 */
export async function createApiKey(
  ports: Pick<AdminPorts, 'storage' | 'clock'>,
  input: CreateApiKeyInput,
): Promise<{ record: ApiKeyRecord; key: string }> {
  const { record, key } = await prepareApiKey(ports, input);
  const stored = await refusingConflicts(
    () => ports.storage.apiKeys.create(record),
    () => new AdminError('conflict', 'api_key', 'an API key with the generated prefix exists; try again'),
  );
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
  ports: Pick<AdminPorts, 'storage' | 'clock'>,
  idOrPrefix: string,
): Promise<void> {
  if (!(await ports.storage.apiKeys.revoke(idOrPrefix, nowOf(ports))))
    throw new AdminError('not_found', 'api_key', `no active API key ${idOrPrefix}`, { key: idOrPrefix });
}
