import { DEVICE_CODE_GRANT_TYPE, type GrantType } from '@idgate/schema';
import type { ClientRecord } from '../model.js';
import type { Storage } from '../ports/storage.js';

// The one public client every cluster's kubectl signs in with: what it is and how to find it.

/** The name of the public client kubectl signs in with, one for every cluster. */
export const KUBECTL_CLIENT_NAME = 'kubectl';

/** Its grant types: the device flow for headless hosts, the loopback browser flow, refresh. */
export const KUBECTL_GRANT_TYPES: readonly GrantType[] = [
  DEVICE_CODE_GRANT_TYPE,
  'authorization_code',
  'refresh_token',
];

/** RFC 8252 §7.3 loopback redirects: any port matches at authorization. */
export const KUBECTL_REDIRECT_URIS: readonly string[] = [
  'http://127.0.0.1/callback',
  'http://[::1]/callback',
];

/** The scopes kubectl may ask for: who the user is, their groups, and a refresh token. */
export const KUBECTL_SCOPES: readonly string[] = ['openid', 'profile', 'email', 'groups', 'offline_access'];

/**
 * The kubectl client: the oldest public client called `kubectl` with the device grant (the one
 * `addCluster` made), or undefined when there is none.
 */
export async function findKubectlClient(storage: Storage): Promise<ClientRecord | undefined> {
  const clients = await storage.clients.list();
  return clients.find(
    (client) =>
      client.name === KUBECTL_CLIENT_NAME &&
      client.public &&
      client.grantTypes.includes(DEVICE_CODE_GRANT_TYPE),
  );
}
