import {
  type CreatedClient,
  type DescribeIssueOptions,
  type GrantType,
  type OAuthClient,
  type PageQuery,
  RegisterClientInput,
  RotateClientSecretInput,
  type RotatedClientSecret,
  UpdateClientInput,
} from '@idgate/schema';
import { recordAdminChange, recordObjectChange } from '../audit/admin.js';
import { publishGrantRevocations } from '../grants/revoke-grant.js';
import type { ClientRecord } from '../model.js';
import type { AuditEventRepository } from '../ports/audit-storage.js';
import { generateClientId, generateSecret, hashSecret } from '../secrets.js';
import { AdminError, parseAdminInput, refusingConflicts } from './errors.js';
import { checkIfMatch } from './etag.js';
import { decodeKeysetCursor, encodeKeysetCursor } from './keyset-cursor.js';
import { findKubectlClient } from './kubectl-client.js';
import { type AdminPorts, type ClientLifetimes, nowOf } from './ports.js';
import { clientView } from './views.js';

/** What an `admin.changed` event of a client may show, and what a declared client sets: never the secret or its hash. */
export const CLIENT_FIELDS = [
  'name',
  'public',
  'trusted',
  'redirectUris',
  'postLogoutRedirectUris',
  'grantTypes',
  'scopes',
  'audiences',
  'accessTokenTtl',
  'refreshTokenTtl',
] as const satisfies readonly (keyof ClientRecord)[];

/** The `admin.changed` event of a client created (`before` null), updated or deleted (`after` null). */
function recordClientChange(
  storage: { auditEvents: AuditEventRepository },
  ports: Pick<AdminPorts, 'clock' | 'auditActor'>,
  before: ClientRecord | null,
  after: ClientRecord | null,
): Promise<void> {
  const { clientId } = (after ?? before) as ClientRecord;
  return recordObjectChange(
    storage,
    ports,
    { objectKind: 'client', objectId: clientId, clientId },
    before && withPolicy(before),
    after && withPolicy(after),
    [...CLIENT_FIELDS, 'requireMfa'],
  );
}

/** A client with `requireMfa` told either way, as its change events compare it. */
function withPolicy(client: ClientRecord): ClientRecord {
  return { ...client, requireMfa: client.requireMfa === true };
}

/** The scopes a client is allowed unless told otherwise. */
export const DEFAULT_CLIENT_SCOPES: readonly string[] = ['openid', 'profile', 'email', 'groups'];

/** The scope that asks for a refresh token (OIDC Core §11). */
const OFFLINE_ACCESS = 'offline_access';

/** Grants that issue refresh tokens: the refresh_token grant alone has nothing to refresh. */
const ISSUING_GRANTS: readonly GrantType[] = [
  'authorization_code',
  'password',
  'urn:ietf:params:oauth:grant-type:device_code',
];

/** A client's settings, checked: everything but its id, secrets and creation time. */
export type ClientSettings = Omit<
  ClientRecord,
  'clientId' | 'secretHash' | 'createdAt' | 'previousSecretHash' | 'previousSecretExpiresAt'
>;

type Label = (path: string) => string;

/**
 * The scopes a client gets when none are given: {@link DEFAULT_CLIENT_SCOPES}, and
 * `offline_access` when it may use the refresh_token grant (without it, it would never get a
 * refresh token).
 * @example defaultClientScopes(['authorization_code', 'refresh_token']) // [..., 'offline_access']
 */
export function defaultClientScopes(grantTypes: readonly GrantType[]): string[] {
  return grantTypes.includes('refresh_token')
    ? [...DEFAULT_CLIENT_SCOPES, OFFLINE_ACCESS]
    : [...DEFAULT_CLIENT_SCOPES];
}

/**
 * Checks that a client's settings make sense together, as registered or as changed: the
 * authorization code grant has a redirect URI and redirect URIs have the authorization code
 * grant; refresh_token comes with a grant that issues refresh tokens and with the
 * `offline_access` scope (a trusted client may go without), and `offline_access` with
 * refresh_token; a public client has no grant that needs a secret; the password grant is for
 * trusted clients; token lifetimes stay within the server's maximum.
 * @throws AdminError `invalid_input` naming the first problem.
 * @example checkClientSettings(settings, ports.lifetimes);
 */
export function checkClientSettings(
  settings: ClientSettings,
  lifetimes: ClientLifetimes,
  label: Label = (path) => path,
): void {
  const refuse = (message: string) => new AdminError('invalid_input', 'client', message);
  const { grantTypes, scopes } = settings;
  const grants = label('grantTypes');
  const has = (grant: GrantType) => grantTypes.includes(grant);
  if (has('authorization_code') && settings.redirectUris.length === 0)
    throw refuse(`${grants} authorization_code needs at least one ${label('redirectUris')}`);
  if (!has('authorization_code') && settings.redirectUris.length > 0)
    throw refuse(
      `${label('redirectUris')}: only used by the authorization_code grant, which ${grants} does not include`,
    );
  if (settings.public) {
    for (const grant of ['client_credentials', 'password'] as const) {
      if (has(grant))
        throw refuse(`${grants} ${grant}: not allowed for a ${label('public')} client, which has no secret`);
    }
  }
  if (has('password') && !settings.trusted)
    throw refuse(`${grants} password: allowed only for a ${label('trusted')} client`);
  if (has('refresh_token') && !ISSUING_GRANTS.some(has))
    throw refuse(
      `${grants} refresh_token: needs a grant that issues refresh tokens (authorization_code, password or device_code)`,
    );
  if (has('refresh_token') && !scopes.includes(OFFLINE_ACCESS) && !settings.trusted)
    throw refuse(
      `${label('scopes')}: must include ${OFFLINE_ACCESS} for ${grants} refresh_token, or the client never gets a refresh token`,
    );
  if (scopes.includes(OFFLINE_ACCESS) && !has('refresh_token'))
    throw refuse(`${label('scopes')} ${OFFLINE_ACCESS}: needs the refresh_token grant in ${grants}`);
  if (settings.accessTokenTtl > lifetimes.maxAccessTokenTtl)
    throw refuse(
      `${label('accessTokenTtl')} ${settings.accessTokenTtl}: must be at most ${lifetimes.maxAccessTokenTtl} seconds (tokens.maxAccessTokenTtl)`,
    );
  if (lifetimes.grantTtl !== undefined && settings.refreshTokenTtl > lifetimes.grantTtl)
    throw refuse(
      `${label('refreshTokenTtl')} ${settings.refreshTokenTtl}: must be at most ${lifetimes.grantTtl} seconds (tokens.grantTtl)`,
    );
}

/**
 * The settings a registration describes, checked field by field (`RegisterClientInput`) and as a
 * whole ({@link checkClientSettings}), with the defaults filled in: grant types
 * `authorization_code refresh_token` for a public client and `client_credentials` for a
 * confidential one, {@link defaultClientScopes}, and the configured lifetimes.
 * `options.label` names fields as the caller's user knows them.
 * @throws AdminError `invalid_input` naming the first problem.
 * @example const settings = parseClientRegistration({ name: 'CI' }, ports.lifetimes);
 */
export function parseClientRegistration(
  input: unknown,
  lifetimes: ClientLifetimes,
  options: Pick<DescribeIssueOptions, 'label'> = {},
): ClientSettings {
  const label = options.label ?? ((path: string) => path);
  const fields = parseAdminInput(RegisterClientInput, input, 'client', options);
  const grantTypes: GrantType[] =
    fields.grantTypes ?? (fields.public ? ['authorization_code', 'refresh_token'] : ['client_credentials']);
  const settings: ClientSettings = {
    name: fields.name,
    public: fields.public,
    trusted: fields.trusted,
    redirectUris: fields.redirectUris,
    postLogoutRedirectUris: fields.postLogoutRedirectUris,
    grantTypes,
    scopes: fields.scopes ?? defaultClientScopes(grantTypes),
    audiences: fields.audiences,
    accessTokenTtl: fields.accessTokenTtl ?? lifetimes.accessTokenTtl,
    refreshTokenTtl: fields.refreshTokenTtl ?? lifetimes.refreshTokenTtl,
    ...(fields.requireMfa === true ? { requireMfa: true } : {}),
  };
  checkClientSettings(settings, lifetimes, label);
  return settings;
}

/** A new client's record with a generated id and, for a confidential client, a generated secret. */
export async function prepareClient(
  ports: Pick<AdminPorts, 'clock' | 'random'>,
  settings: ClientSettings,
): Promise<{ record: ClientRecord; clientSecret: string | undefined }> {
  const clientSecret = settings.public ? undefined : generateSecret(ports.random);
  const record: ClientRecord = {
    ...settings,
    clientId: generateClientId(ports.random),
    secretHash: clientSecret === undefined ? null : await hashSecret(clientSecret),
    previousSecretHash: null,
    previousSecretExpiresAt: null,
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
  ports: Pick<AdminPorts, 'storage' | 'clock' | 'auditActor'>,
  settings: ClientSettings,
): Promise<{ client: ClientRecord; clientSecret: string | undefined }> {
  const { record, clientSecret } = await prepareClient(ports, settings);
  const client = await ports.storage.transaction(async (tx) => {
    // 80 random bits make a collision practically impossible; say so plainly if it happens.
    const created = await refusingConflicts(
      () => tx.clients.create(record),
      () => new AdminError('conflict', 'client', 'a client with the generated id exists; try again'),
    );
    await recordClientChange(tx, ports, null, created);
    return created;
  });
  return { client, clientSecret };
}

/**
 * Registers a client from an admin request body, answering its view with the secret (for a
 * confidential client) to be shown once.
 * @throws AdminError `invalid_input` naming the first problem.
 * @example const created = await createClient(ports, { name: 'web', grantTypes: ['authorization_code'], redirectUris: ['https://app.example.com/cb'] });
 */
export async function createClient(
  ports: Pick<AdminPorts, 'storage' | 'clock' | 'lifetimes' | 'auditActor'>,
  input: unknown,
  options: Pick<DescribeIssueOptions, 'label'> = {},
): Promise<CreatedClient> {
  const { client, clientSecret } = await registerClient(
    ports,
    parseClientRegistration(input, ports.lifetimes, options),
  );
  const view = clientView(client);
  return clientSecret === undefined ? view : { ...view, clientSecret };
}

/**
 * Every client, by creation time (never a secret: only its hash is stored).
 * @example const clients = await listClients(ports);
 */
export function listClients(ports: Pick<AdminPorts, 'storage'>): Promise<ClientRecord[]> {
  return ports.storage.clients.list();
}

/**
 * One page of clients by creation time: `limit` of them after `cursor` (the `nextCursor` of the
 * page before), read as one keyset query.
 * @throws AdminError `invalid_input` for a cursor this listing did not answer.
 * @example const { items, nextCursor } = await listClientPage(ports, { limit: 100 });
 */
export async function listClientPage(
  ports: Pick<AdminPorts, 'storage'>,
  query: PageQuery,
): Promise<{ items: OAuthClient[]; nextCursor: string | null }> {
  const after = query.cursor === undefined ? undefined : decodeKeysetCursor(query.cursor, 'client');
  const rows = await ports.storage.clients.listPage(
    query.limit + 1,
    after && { createdAt: after.createdAt, clientId: after.id },
  );
  const page = rows.slice(0, query.limit);
  const last = page.at(-1);
  return {
    items: page.map(clientView),
    nextCursor:
      rows.length > query.limit && last !== undefined
        ? encodeKeysetCursor({ createdAt: last.createdAt, id: last.clientId })
        : null,
  };
}

const notFound = (clientId: string) =>
  new AdminError('not_found', 'client', `no client ${clientId}`, { key: clientId });

/**
 * The client `clientId`, as the admin API shows it (with its `etag`).
 * @throws AdminError `not_found`.
 * @example const { etag, redirectUris } = await getClient(ports, 'cl_abcdefghijklmnop');
 */
export async function getClient(ports: Pick<AdminPorts, 'storage'>, clientId: string): Promise<OAuthClient> {
  const client = await ports.storage.clients.findById(clientId);
  if (client === undefined) throw notFound(clientId);
  return clientView(client);
}

/**
 * Changes a client, in one transaction: the fields given replace the current ones (lists as a
 * whole) and the result is checked like a registration ({@link checkClientSettings}). When the
 * grant types change and the scopes are not given, `offline_access` follows the refresh_token
 * grant. The audiences of the kubectl client follow the registered clusters and cannot be
 * changed here. `options.ifMatch` (the `If-Match` header) must name the client's current ETag.
 * @throws AdminError `not_found`; `invalid_input` naming the first problem; `read_only` for the
 * kubectl client's audiences; `precondition_failed` when the client changed since it was read.
 * @example const client = await updateClient(ports, 'cl_abcdefghijklmnop', { trusted: true }, { ifMatch: etag });
 */
export async function updateClient(
  ports: Pick<AdminPorts, 'storage' | 'clock' | 'lifetimes' | 'auditActor'>,
  clientId: string,
  input: unknown,
  options: Pick<DescribeIssueOptions, 'label'> & { ifMatch?: string | undefined } = {},
): Promise<OAuthClient> {
  const label = options.label ?? ((path: string) => path);
  const patch = parseAdminInput(UpdateClientInput, input ?? {}, 'client', { label });
  return ports.storage.transaction(async (tx) => {
    const current = await tx.clients.findById(clientId);
    if (current === undefined) throw notFound(clientId);
    checkIfMatch(options.ifMatch, clientView(current).etag, 'client', clientId);
    if (patch.audiences !== undefined && !sameSet(patch.audiences, current.audiences)) {
      const kubectl = await findKubectlClient(tx);
      if (kubectl?.clientId === clientId)
        throw new AdminError(
          'read_only',
          'client',
          `${label('audiences')}: the kubectl client's audiences are those of the registered clusters; use \`idgate clusters add\` or \`idgate clusters remove\``,
          { key: clientId },
        );
    }
    const grantTypes = patch.grantTypes ?? current.grantTypes;
    let scopes = patch.scopes ?? current.scopes;
    if (patch.scopes === undefined && patch.grantTypes !== undefined) {
      // Defaults follow grants: offline_access comes and goes with the refresh_token grant.
      const withoutOffline = scopes.filter((scope) => scope !== OFFLINE_ACCESS);
      scopes = grantTypes.includes('refresh_token') ? [...withoutOffline, OFFLINE_ACCESS] : withoutOffline;
    }
    const next: ClientRecord = {
      ...current,
      name: patch.name ?? current.name,
      redirectUris: patch.redirectUris ?? current.redirectUris,
      postLogoutRedirectUris: patch.postLogoutRedirectUris ?? current.postLogoutRedirectUris,
      grantTypes,
      scopes,
      audiences: patch.audiences ?? current.audiences,
      accessTokenTtl: patch.accessTokenTtl ?? current.accessTokenTtl,
      refreshTokenTtl: patch.refreshTokenTtl ?? current.refreshTokenTtl,
      trusted: patch.trusted ?? current.trusted,
      ...(patch.requireMfa === undefined ? {} : { requireMfa: patch.requireMfa }),
    };
    checkClientSettings(next, ports.lifetimes, label);
    if (!(await tx.clients.update(next))) throw notFound(clientId);
    await recordClientChange(tx, ports, current, next);
    return clientView(next);
  });
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((value) => b.includes(value));
}

/**
 * Gives a confidential client a new secret, returned to be shown once. The secret it replaces
 * keeps working for `gracePeriod` seconds (0, the default: not at all), so that its users can
 * switch over; only one previous secret is kept.
 * @throws AdminError `not_found`; `invalid_input` for a public client or a bad grace period.
 * @example const { clientSecret } = await rotateClientSecret(ports, 'cl_abcdefghijklmnop', { gracePeriod: 3600 });
 */
export async function rotateClientSecret(
  ports: Pick<AdminPorts, 'storage' | 'clock' | 'random' | 'auditActor'>,
  clientId: string,
  input: unknown,
  options: Pick<DescribeIssueOptions, 'label'> = {},
): Promise<RotatedClientSecret> {
  const { gracePeriod } = parseAdminInput(RotateClientSecretInput, input ?? {}, 'client', options);
  const clientSecret = generateSecret(ports.random);
  const secretHash = await hashSecret(clientSecret);
  const now = nowOf(ports);
  return ports.storage.transaction(async (tx) => {
    const current = await tx.clients.findById(clientId);
    if (current === undefined) throw notFound(clientId);
    if (current.public || current.secretHash === null)
      throw new AdminError(
        'invalid_input',
        'client',
        `client ${clientId} is public: it has no secret to rotate`,
        {
          key: clientId,
        },
      );
    const previousSecretExpiresAt = gracePeriod === 0 ? null : new Date(now.getTime() + gracePeriod * 1000);
    const next: ClientRecord = {
      ...current,
      secretHash,
      previousSecretHash: previousSecretExpiresAt === null ? null : current.secretHash,
      previousSecretExpiresAt,
    };
    if (!(await tx.clients.update(next))) throw notFound(clientId);
    // Only when the old secret stops working: the secrets themselves never enter an event.
    await recordAdminChange(tx, ports, {
      objectKind: 'client',
      objectId: clientId,
      action: 'updated',
      operation: 'rotate-secret',
      clientId,
      before: {},
      after: { gracePeriod },
    });
    return {
      clientId,
      clientSecret,
      previousSecretExpiresAt: previousSecretExpiresAt?.toISOString() ?? null,
    };
  });
}

/**
 * Deletes a client, in one transaction, and revokes its grants: their refresh tokens stop
 * working and their access tokens are refused on every replica. The kubectl client cannot be
 * deleted while clusters are registered (`idgate clusters remove` them first).
 * @throws AdminError `not_found`; `read_only` for the kubectl client of registered clusters.
 * @example const { revokedGrants } = await removeClient(ports, 'cl_abcdefghijklmnop');
 */
export async function removeClient(
  ports: Pick<AdminPorts, 'storage' | 'clock' | 'lifetimes' | 'auditActor'>,
  clientId: string,
): Promise<{ revokedGrants: number }> {
  const now = nowOf(ports);
  return ports.storage.transaction(async (tx) => {
    const kubectl = await findKubectlClient(tx);
    if (kubectl?.clientId === clientId && (await tx.clusters.list()).length > 0)
      throw new AdminError(
        'read_only',
        'client',
        `client ${clientId} is the kubectl client of the registered clusters; remove the clusters first (\`idgate clusters remove <name>\`)`,
        { key: clientId },
      );
    const current = await tx.clients.findById(clientId);
    if (current === undefined || !(await tx.clients.remove(clientId))) throw notFound(clientId);
    const revoked = await tx.grants.revokeByClient(clientId, now);
    await recordClientChange(tx, ports, current, null);
    await publishGrantRevocations(
      { storage: tx, clock: ports.clock, maxTokenLifetimeSeconds: ports.lifetimes.maxAccessTokenTtl },
      revoked,
    );
    return { revokedGrants: revoked.length };
  });
}
