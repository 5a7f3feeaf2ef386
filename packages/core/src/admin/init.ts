import type { ApiKeyRecord, ClientRecord, UserRecord } from '../model.js';
import { prepareApiKey } from './api-keys.js';
import { prepareClient } from './clients.js';
import { AdminError, refusingConflicts } from './errors.js';
import type { AdminPorts } from './ports.js';
import { prepareUser } from './users.js';

/** The group that marks idgate administrators. */
export const ADMIN_GROUP = 'idgate:admins';

/** What {@link initializeStorage} created; the secrets are shown only this once. */
export interface Initialized {
  admin: { user: UserRecord; password: string };
  apiKey: { record: ApiKeyRecord; key: string };
  client: { client: ClientRecord; clientSecret: string };
}

const ALREADY_INITIALIZED = 'the database is already initialized';

/**
 * Sets up empty storage, all or nothing: an admin user (group {@link ADMIN_GROUP}) with a
 * generated password, an API key with the `tokenreview` and `admin` scopes, and a trusted
 * confidential client for the CLI (`idgate-cli`) that may use every grant.
 * @throws AdminError `conflict` when storage holds a user, a client or an API key already.
 * @example const { admin, apiKey, client } = await initializeStorage(ports, { adminUsername: 'admin' });
 */
export async function initializeStorage(
  ports: Pick<AdminPorts, 'storage' | 'clock' | 'hasher' | 'lifetimes'>,
  input: { adminUsername: string },
): Promise<Initialized> {
  // Slow or random work first, so the transaction stays short.
  const admin = await prepareUser(ports, {
    username: input.adminUsername,
    email: null,
    displayName: null,
    groups: [ADMIN_GROUP],
  });
  const apiKey = await prepareApiKey(ports, { name: 'init', scopes: ['tokenreview', 'admin'] });
  const client = await prepareClient(ports, {
    name: 'idgate-cli',
    public: false,
    trusted: true,
    redirectUris: [],
    postLogoutRedirectUris: [],
    grantTypes: ['password', 'client_credentials', 'authorization_code', 'refresh_token'],
    scopes: ['openid', 'profile', 'email', 'groups', 'offline_access'],
    audiences: [],
    accessTokenTtl: ports.lifetimes.accessTokenTtl,
    refreshTokenTtl: ports.lifetimes.refreshTokenTtl,
  });
  const refuse = () => new AdminError('conflict', 'storage', ALREADY_INITIALIZED);
  // A concurrent initialization that won the race shows up as a unique-key conflict.
  return refusingConflicts(
    () =>
      ports.storage.transaction(async (tx) => {
        if ((await tx.users.count()) > 0 || (await tx.clients.count()) > 0 || (await tx.apiKeys.count()) > 0)
          throw refuse();
        return {
          admin: { user: await tx.users.create(admin.record), password: admin.password },
          apiKey: { record: await tx.apiKeys.create(apiKey.record), key: apiKey.key },
          // A confidential client: it has a secret.
          client: {
            client: await tx.clients.create(client.record),
            clientSecret: client.clientSecret as string,
          },
        };
      }),
    refuse,
  );
}
