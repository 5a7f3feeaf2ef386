import type { AppContext } from '../context.js';
import type { DeviceTarget } from '../views/device.js';

/**
 * How the device confirmation page names the audiences a device's tokens will carry. Today an
 * audience is shown as itself; once audiences map to registered clusters, this is the one place
 * that says "Cluster: production" instead.
 */
export async function deviceTargets(
  _idgate: AppContext,
  audiences: readonly string[],
): Promise<DeviceTarget[]> {
  return audiences.map((name) => ({ label: 'Audience', name }));
}
