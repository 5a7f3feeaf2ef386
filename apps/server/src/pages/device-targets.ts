import type { AppContext } from '../context.js';
import type { DeviceTarget } from './views/device.js';

/**
 * How the device confirmation page names the audiences a device's tokens will carry: a registered
 * cluster's audience as "Cluster: alpha", any other audience as itself, so the person sees which
 * clusters they are letting the device into (RFC 8628 §5.4).
 * @example await deviceTargets(idgate, ['kubernetes:alpha', 'https://api.example']) // [{ label: 'Cluster', name: 'alpha' }, { label: 'Audience', name: 'https://api.example' }]
 */
export async function deviceTargets(
  idgate: AppContext,
  audiences: readonly string[],
): Promise<DeviceTarget[]> {
  const clusters = new Map(
    (await idgate.storage.clusters.list()).map((cluster) => [cluster.audience, cluster.name]),
  );
  return audiences.map((audience) => {
    const cluster = clusters.get(audience);
    return cluster === undefined
      ? { label: 'Audience', name: audience }
      : { label: 'Cluster', name: cluster };
  });
}
