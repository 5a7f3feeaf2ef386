import {
  Cluster,
  ClusterName,
  type CreateClusterInput,
  CreatedCluster,
  type UpdateClusterInput,
} from '@idgate/schema';
import { ADMIN_CALL, NO_CONTENT } from './admin-http.js';
import { IdgateSdkError } from './errors.js';
import { FederationMethods, itemsOf } from './federation.js';

const CLUSTERS = itemsOf(Cluster);

/**
 * The methods of {@link IdgateAdminClient} about Kubernetes clusters: the admin API under
 * `/admin/v1/clusters`.
 * @example
 * const admin = createIdgateAdminClient({ baseUrl: 'https://id.example.com', apiKey: adminKey });
 * const { cluster, apiKey } = await admin.createCluster({ name: 'prod' });
 */
export interface IdgateClusterMethods {
  /**
   * `GET /admin/v1/clusters`: every cluster, by name.
   * @example const { items } = await admin.listClusters();
   */
  listClusters(): Promise<{ items: Cluster[] }>;

  /**
   * `GET /admin/v1/clusters/{name}`; a 404 `IdgateHttpError` (problem code `cluster_not_found`)
   * when there is none.
   * @example const { audience } = await admin.getCluster('prod');
   */
  getCluster(name: string): Promise<Cluster>;

  /**
   * `POST /admin/v1/clusters`: registers a cluster with its audience (default
   * `kubernetes:<name>`) and whether its tokens need a sign-in with a second factor
   * (`requireMfa`, default false), and answers, once, the `tokenreview` API key bound to it (its
   * kube-apiserver's webhook key) and the kubectl client id. A 400 (`invalid_cluster`) names the
   * first bad field; a 409 (`cluster_exists`) says the name or audience is taken. Never retried.
   * @example const { apiKey, cluster } = await admin.createCluster({ name: 'prod', requireMfa: true });
   */
  createCluster(input: CreateClusterInput): Promise<CreatedCluster>;

  /**
   * `PATCH /admin/v1/clusters/{name}`: renames a cluster, gives it another audience and/or sets
   * `requireMfa` (tokens for it need the MFA `acr`); its
   * API keys stay valid and follow it (TokenReview answers for the new audience only). A 409
   * (`cluster_exists`) says the name or audience is another cluster's. Never retried.
   * @example await admin.updateCluster('prod', { audience: 'https://prod.k8s.example.com' });
   * @example await admin.updateCluster('prod', { requireMfa: true });
   */
  updateCluster(name: string, patch: UpdateClusterInput): Promise<Cluster>;

  /**
   * `DELETE /admin/v1/clusters/{name}`: removes a cluster; its API keys are revoked and kubectl's
   * client stops getting its audience. Never retried.
   * @example await admin.deleteCluster('prod');
   */
  deleteCluster(name: string): Promise<void>;
}

/** The cluster methods of the admin client; its class extends this one. */
export class ClusterMethods extends FederationMethods implements IdgateClusterMethods {
  async listClusters(): Promise<{ items: Cluster[] }> {
    return this[ADMIN_CALL]({
      method: 'GET',
      path: 'admin/v1/clusters',
      schema: CLUSTERS,
      schemaName: '{ items: Cluster[] }',
    });
  }

  async getCluster(name: string): Promise<Cluster> {
    return this[ADMIN_CALL]({
      method: 'GET',
      path: `admin/v1/clusters/${clusterSegment(name, 'GET /admin/v1/clusters/{name}')}`,
      schema: Cluster,
      schemaName: 'Cluster',
    });
  }

  async createCluster(input: CreateClusterInput): Promise<CreatedCluster> {
    let body: string;
    try {
      body = JSON.stringify(input);
    } catch (error) {
      throw new IdgateSdkError('input must be serializable as JSON', {
        endpoint: 'POST /admin/v1/clusters',
        cause: error,
      });
    }
    return this[ADMIN_CALL]({
      method: 'POST',
      path: 'admin/v1/clusters',
      schema: CreatedCluster,
      schemaName: 'CreatedCluster',
      headers: { 'content-type': 'application/json' },
      body,
      retry: 0,
    });
  }

  async updateCluster(name: string, patch: UpdateClusterInput): Promise<Cluster> {
    const endpoint = 'PATCH /admin/v1/clusters/{name}';
    let body: string;
    try {
      body = JSON.stringify(patch);
    } catch (error) {
      throw new IdgateSdkError('patch must be serializable as JSON', { endpoint, cause: error });
    }
    return this[ADMIN_CALL]({
      method: 'PATCH',
      path: `admin/v1/clusters/${clusterSegment(name, endpoint)}`,
      schema: Cluster,
      schemaName: 'Cluster',
      headers: { 'content-type': 'application/json' },
      body,
      retry: 0,
    });
  }

  async deleteCluster(name: string): Promise<void> {
    await this[ADMIN_CALL]({
      method: 'DELETE',
      path: `admin/v1/clusters/${clusterSegment(name, 'DELETE /admin/v1/clusters/{name}')}`,
      schema: NO_CONTENT,
      schemaName: 'an empty response',
      retry: 0,
    });
  }
}

/** `name` as a path segment, checked first so that nothing like `..` can change the path. */
function clusterSegment(name: string, endpoint: string): string {
  if (typeof name !== 'string' || !ClusterName.safeParse(name).success) {
    throw new IdgateSdkError(
      'name must be a cluster name: letters, digits and -, starting and ending with a letter or digit',
      {
        endpoint,
      },
    );
  }
  return name.toLowerCase();
}
