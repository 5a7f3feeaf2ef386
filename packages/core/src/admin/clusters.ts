import {
  type Cluster,
  CreateClusterInput,
  type CreatedCluster,
  type DescribeIssueOptions,
  defaultClusterAudience,
  UpdateClusterInput,
} from '@idgate/schema';
import { recordObjectChange } from '../audit/admin.js';
import type { ApiKeyRecord, ClientRecord, ClusterRecord } from '../model.js';
import type { Storage } from '../ports/storage.js';
import { prepareApiKey, recordApiKeyCreated } from './api-keys.js';
import { prepareClient } from './clients.js';
import { AdminError, parseAdminInput, refusingConflicts } from './errors.js';
import {
  findKubectlClient,
  KUBECTL_CLIENT_NAME,
  KUBECTL_GRANT_TYPES,
  KUBECTL_REDIRECT_URIS,
  KUBECTL_SCOPES,
} from './kubectl-client.js';
import { type AdminPorts, nowOf } from './ports.js';
import { clusterView } from './views.js';

type Ports = Pick<AdminPorts, 'storage' | 'clock' | 'auditActor'>;

const notFound = (name: string) =>
  new AdminError('not_found', 'cluster', `no cluster ${name}`, { key: name });

/** Keeps the kubectl client's audiences equal to the set of cluster audiences (in `storage`'s transaction). */
async function alignKubectlAudiences(storage: Storage, client: ClientRecord): Promise<void> {
  const audiences = (await storage.clusters.list()).map((cluster) => cluster.audience);
  await storage.clients.setAudiences(client.clientId, audiences);
}

/**
 * Registers a Kubernetes cluster, in one transaction: the cluster with its audience (by default
 * `kubernetes:<name>`), a `tokenreview` API key bound to it (returned to be shown once), and —
 * the first time — the public client kubectl signs in with, whose audiences are kept equal to
 * the set of cluster audiences so that it may ask for any of them with RFC 8707 `resource`.
 * @throws AdminError `invalid_input` naming the bad field; `conflict` for a taken name or audience.
 * @example const { cluster, apiKey } = await addCluster(ports, { name: 'prod' });
 */
export async function addCluster(
  ports: Pick<AdminPorts, 'storage' | 'clock' | 'lifetimes' | 'auditActor'>,
  input: unknown,
  options: Omit<DescribeIssueOptions, 'input' | 'secrets'> = {},
): Promise<CreatedCluster> {
  const fields = parseAdminInput(CreateClusterInput, input, 'cluster', options);
  const audience = fields.audience ?? defaultClusterAudience(fields.name);
  const now = nowOf(ports);
  const record: ClusterRecord = {
    name: fields.name,
    audience,
    requireMfa: fields.requireMfa ?? false,
    createdAt: now,
  };
  const { record: keyRecord, key } = await prepareApiKey(
    ports,
    { name: `cluster:${fields.name}`, scopes: ['tokenreview'] },
    { name: fields.name, audience },
  );
  return ports.storage.transaction(async (tx) => {
    const { cluster, client, kubectlClientCreated } = await registerClusterIn(tx, ports, record);
    const stored = await tx.apiKeys.create(keyRecord);
    await recordApiKeyCreated(tx, ports, stored);
    return {
      cluster: clusterView(cluster, client.clientId),
      apiKey: key,
      apiKeyId: stored.id,
      kubectlClientCreated,
    };
  });
}

/**
 * Stores the cluster `record` in `tx`'s transaction with what registering one takes besides its
 * webhook key: the kubectl client (made the first time) and its audiences, and the audit event.
 * @throws AdminError `conflict` for a taken name or audience.
 */
export async function registerClusterIn(
  tx: Storage,
  ports: Pick<AdminPorts, 'clock' | 'lifetimes' | 'auditActor' | 'random'>,
  record: ClusterRecord,
): Promise<{ cluster: ClusterRecord; client: ClientRecord; kubectlClientCreated: boolean }> {
  if ((await tx.clusters.findByName(record.name)) !== undefined) throw taken('name', record.name);
  if ((await tx.clusters.list()).some((cluster) => cluster.audience === record.audience))
    throw taken('audience', record.audience);
  const cluster = await refusingConflicts(
    () => tx.clusters.create(record),
    () => taken('name', record.name),
  );
  let client = await findKubectlClient(tx);
  const kubectlClientCreated = client === undefined;
  if (client === undefined) {
    const prepared = await prepareClient(ports, {
      name: KUBECTL_CLIENT_NAME,
      public: true,
      trusted: false,
      redirectUris: [...KUBECTL_REDIRECT_URIS],
      postLogoutRedirectUris: [],
      grantTypes: [...KUBECTL_GRANT_TYPES],
      scopes: [...KUBECTL_SCOPES],
      audiences: [],
      accessTokenTtl: ports.lifetimes.accessTokenTtl,
      refreshTokenTtl: ports.lifetimes.refreshTokenTtl,
    });
    client = await tx.clients.create(prepared.record);
    await recordObjectChange(
      tx,
      ports,
      { objectKind: 'client', objectId: client.clientId, clientId: client.clientId },
      null,
      client,
      ['name', 'public', 'grantTypes', 'scopes'],
    );
  }
  await alignKubectlAudiences(tx, client);
  await recordObjectChange(tx, ports, { objectKind: 'cluster', objectId: cluster.name }, null, cluster, [
    'name',
    'audience',
    'requireMfa',
  ]);
  return { cluster, client, kubectlClientCreated };
}

function taken(what: 'name' | 'audience', value: string): AdminError {
  return new AdminError(
    'conflict',
    'cluster',
    what === 'name' ? `cluster ${value} already exists` : `another cluster has the audience ${value}`,
    { key: value },
  );
}

/**
 * Every cluster, by name.
 * @example const clusters = await listClusters(ports);
 */
export async function listClusters(ports: Pick<AdminPorts, 'storage'>): Promise<Cluster[]> {
  const [clusters, client] = await Promise.all([
    ports.storage.clusters.list(),
    findKubectlClient(ports.storage),
  ]);
  return clusters.map((cluster) => clusterView(cluster, client?.clientId ?? null));
}

/**
 * The cluster called `name` (any case).
 * @throws AdminError `not_found`.
 * @example const { audience } = await getCluster(ports, 'prod');
 */
export async function getCluster(ports: Pick<AdminPorts, 'storage'>, name: string): Promise<Cluster> {
  const record = await ports.storage.clusters.findByName(name.toLowerCase());
  if (record === undefined) throw notFound(name);
  return clusterView(record, (await findKubectlClient(ports.storage))?.clientId ?? null);
}

/**
 * Renames a cluster, gives it another audience and/or sets whether its tokens need a second
 * factor (`requireMfa`), in one transaction, without revoking its
 * keys: every API key bound to it follows (a TokenReview through one then accepts tokens for the
 * new audience only), and the kubectl client gets the new audience instead of the old.
 * @throws AdminError `invalid_input` naming the bad field; `not_found`; `conflict` for a name or
 * audience another cluster has.
 * @example const cluster = await updateCluster(ports, 'prod', { audience: 'https://prod.example.com' });
 */
export async function updateCluster(
  ports: Ports,
  name: string,
  input: unknown,
  options: Omit<DescribeIssueOptions, 'input' | 'secrets'> = {},
): Promise<Cluster> {
  const fields = parseAdminInput(UpdateClusterInput, input, 'cluster', options);
  return ports.storage.transaction(async (tx) => {
    const before = await tx.clusters.findByName(name.toLowerCase());
    if (before === undefined) throw notFound(name);
    if (fields.name !== undefined && fields.name !== before.name) {
      if ((await tx.clusters.findByName(fields.name)) !== undefined) throw taken('name', fields.name);
    }
    if (
      fields.audience !== undefined &&
      (await tx.clusters.list()).some((c) => c.name !== before.name && c.audience === fields.audience)
    )
      throw taken('audience', fields.audience);
    const after = await refusingConflicts(
      () =>
        tx.clusters.update(before.name, {
          ...(fields.name === undefined ? {} : { name: fields.name }),
          ...(fields.audience === undefined ? {} : { audience: fields.audience }),
          ...(fields.requireMfa === undefined ? {} : { requireMfa: fields.requireMfa }),
        }),
      () => taken('name', fields.name ?? before.name),
    );
    if (after === undefined) throw notFound(name);
    await tx.apiKeys.rebindCluster(before.name, { name: after.name, audience: after.audience });
    const client = await findKubectlClient(tx);
    if (client !== undefined && after.audience !== before.audience) await alignKubectlAudiences(tx, client);
    await recordObjectChange(tx, ports, { objectKind: 'cluster', objectId: after.name }, before, after, [
      'name',
      'audience',
      'requireMfa',
    ]);
    return clusterView(after, client?.clientId ?? null);
  });
}

/**
 * Removes a cluster, in one transaction: its API keys are revoked (a key bound to no cluster
 * would accept every token) and the kubectl client no longer gets its audience. The kubectl
 * client itself stays, for the clusters still to come.
 * @throws AdminError `not_found`.
 * @example const { revokedApiKeys } = await removeCluster(ports, 'prod');
 */
export async function removeCluster(
  ports: Ports,
  name: string,
): Promise<{ name: string; revokedApiKeys: number }> {
  return ports.storage.transaction(async (tx) => {
    const record = await tx.clusters.findByName(name.toLowerCase());
    if (record === undefined) throw notFound(name);
    if (!(await tx.clusters.remove(record.name))) throw notFound(name);
    const revokedApiKeys = await tx.apiKeys.revokeByCluster(record.name, nowOf(ports));
    const client = await findKubectlClient(tx);
    if (client !== undefined) await alignKubectlAudiences(tx, client);
    await recordObjectChange(tx, ports, { objectKind: 'cluster', objectId: record.name }, record, null, [
      'name',
      'audience',
      'requireMfa',
    ]);
    return { name: record.name, revokedApiKeys };
  });
}

/**
 * A new `tokenreview` API key bound to the cluster `name`, for a webhook kubeconfig: stored keys
 * are hashes, so a kubeconfig needs a fresh one. Older keys stay until revoked.
 * @throws AdminError `not_found`.
 * @example const { key } = await issueClusterApiKey(ports, 'prod');
 */
export async function issueClusterApiKey(
  ports: Ports,
  name: string,
): Promise<{ cluster: ClusterRecord; record: ApiKeyRecord; key: string }> {
  // One transaction: a cluster removed meanwhile leaves no key bound to it.
  return ports.storage.transaction(async (tx) => {
    const cluster = await tx.clusters.findByName(name.toLowerCase());
    if (cluster === undefined) throw notFound(name);
    const { record, key } = await prepareApiKey(
      ports,
      { name: `cluster:${cluster.name}`, scopes: ['tokenreview'] },
      { name: cluster.name, audience: cluster.audience },
    );
    const stored = await refusingConflicts(
      () => tx.apiKeys.create(record),
      () => new AdminError('conflict', 'api_key', 'an API key with the generated prefix exists; try again'),
    );
    await recordApiKeyCreated(tx, ports, stored);
    return { cluster, record: stored, key };
  });
}
