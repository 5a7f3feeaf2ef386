import { type DescribeIssueOptions, type GrantType, RegisterClientInput } from '@idgate/schema';
import type { ClientRecord } from '../model.js';
import { generateClientId, generateSecret, hashSecret } from '../secrets.js';
import { AdminError, parseAdminInput, refusingConflicts } from './errors.js';
import { type AdminPorts, type ClientLifetimes, nowOf } from './ports.js';

/** The scopes a client is allowed unless told otherwise. */
export const DEFAULT_CLIENT_SCOPES: readonly string[] = ['openid', 'profile', 'email', 'groups'];

/** A client's settings, checked: everything but its id, secret and creation time. */
export type ClientSettings = Omit<ClientRecord, 'clientId' | 'secretHash' | 'createdAt'>;

/**
 * The settings a registration describes, checked field by field (`RegisterClientInput`) and as a
 * whole, with the defaults filled in: grant types `authorization_code refresh_token` for a public
 * client and `client_credentials` for a confidential one, {@link DEFAULT_CLIENT_SCOPES}, and the
 * configured lifetimes. `options.label` names fields as the caller's user knows them.
 * @throws AdminError `invalid_input` naming the first problem: a bad field, a public client with
 * a grant that needs a secret, the password grant for an untrusted client, the authorization
 * code grant without a redirect URI, an access token lifetime above the maximum.
 * @example const settings = parseClientRegistration({ name: 'CI' }, ports.lifetimes);
 */
export function parseClientRegistration(
  input: unknown,
  lifetimes: ClientLifetimes,
  options: Pick<DescribeIssueOptions, 'label'> = {},
): ClientSettings {
  const label = options.label ?? ((path: string) => path);
  const fields = parseAdminInput(RegisterClientInput, input, 'client', options);
  const refuse = (message: string) => new AdminError('invalid_input', 'client', message);
  const grantTypes: GrantType[] =
    fields.grantTypes ?? (fields.public ? ['authorization_code', 'refresh_token'] : ['client_credentials']);
  const grants = label('grantTypes');
  if (grantTypes.includes('authorization_code') && fields.redirectUris.length === 0)
    throw refuse(`${grants} authorization_code needs at least one ${label('redirectUris')}`);
  if (fields.public) {
    for (const grant of ['client_credentials', 'password'] as const) {
      if (grantTypes.includes(grant))
        throw refuse(`${grants} ${grant}: not allowed for a ${label('public')} client, which has no secret`);
    }
  }
  if (grantTypes.includes('password') && !fields.trusted)
    throw refuse(`${grants} password: allowed only for a ${label('trusted')} client`);
  const accessTokenTtl = fields.accessTokenTtl ?? lifetimes.accessTokenTtl;
  if (accessTokenTtl > lifetimes.maxAccessTokenTtl)
    throw refuse(
      `${label('accessTokenTtl')} ${accessTokenTtl}: must be at most ${lifetimes.maxAccessTokenTtl} seconds (tokens.maxAccessTokenTtl)`,
    );
  return {
    name: fields.name,
    public: fields.public,
    trusted: fields.trusted,
    redirectUris: fields.redirectUris,
    postLogoutRedirectUris: fields.postLogoutRedirectUris,
    grantTypes,
    scopes: fields.scopes ?? [...DEFAULT_CLIENT_SCOPES],
    audiences: fields.audiences,
    accessTokenTtl,
    refreshTokenTtl: lifetimes.refreshTokenTtl,
  };
}

/** A new client's record with a generated id and, for a confidential client, a generated secret. */
export async function prepareClient(
  ports: Pick<AdminPorts, 'clock'>,
  settings: ClientSettings,
): Promise<{ record: ClientRecord; clientSecret: string | undefined }> {
  const clientSecret = settings.public ? undefined : generateSecret();
  const record: ClientRecord = {
    ...settings,
    clientId: generateClientId(),
    secretHash: clientSecret === undefined ? null : await hashSecret(clientSecret),
    createdAt: nowOf(ports),
  };
  return { record, clientSecret };
}

/**
 * Registers a client with a generated `client_id`; a confidential one gets a generated secret,
 * returned to be shown once and stored only as a hash.
 * @throws AdminError `conflict` in the practically impossible case that the generated id exists.
 * @example const { client, clientSecret } = await registerClient(ports, parseClientRegistration(input, ports.lifetimes));
 */
export async function registerClient(
  ports: Pick<AdminPorts, 'storage' | 'clock'>,
  settings: ClientSettings,
): Promise<{ client: ClientRecord; clientSecret: string | undefined }> {
  const { record, clientSecret } = await prepareClient(ports, settings);
  // 80 random bits make a collision practically impossible; say so plainly if it happens.
  const client = await refusingConflicts(
    () => ports.storage.clients.create(record),
    () => new AdminError('conflict', 'client', 'a client with the generated id exists; try again'),
  );
  return { client, clientSecret };
}

/**
 * Every client, by creation time (never a secret: only its hash is stored).
 * @example const clients = await listClients(ports);
 */
export function listClients(ports: Pick<AdminPorts, 'storage'>): Promise<ClientRecord[]> {
  return ports.storage.clients.list();
}

/**
 * Deletes a client.
 * @throws AdminError `not_found`.
 * @example await removeClient(ports, 'cl_abcdefghijklmnop');
 */
export async function removeClient(ports: Pick<AdminPorts, 'storage'>, clientId: string): Promise<void> {
  if (!(await ports.storage.clients.remove(clientId)))
    throw new AdminError('not_found', 'client', `no client ${clientId}`, { key: clientId });
}
