import type { AppContext } from '../context.js';
import type { ResourceTarget } from './views/consent.js';

/**
 * How the consent and device confirmation pages name the audiences a grant will reach: a
 * registered cluster's audience as "Cluster: alpha", any other audience as itself ("Audience:
 * https://api.example"), so the person sees every cluster they are letting the application or
 * device into (RFC 8628 §5.4, RFC 8707).
 * @example await resourceTargets(idgate, ['kubernetes:alpha', 'https://api.example']) // [{ kind: 'cluster', name: 'alpha' }, { kind: 'audience', name: 'https://api.example' }]
 */
export async function resourceTargets(
  idgate: AppContext,
  audiences: readonly string[],
): Promise<ResourceTarget[]> {
  if (audiences.length === 0) return [];
  const clusters = new Map(
    (await idgate.storage.clusters.list()).map((cluster) => [cluster.audience, cluster.name]),
  );
  return audiences.map((audience) => {
    const cluster = clusters.get(audience);
    return cluster === undefined ? { kind: 'audience', name: audience } : { kind: 'cluster', name: cluster };
  });
}
