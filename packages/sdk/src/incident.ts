import {
  BlockedAddress,
  ClientGrantInfo,
  ClientSessionInfo,
  EndedSessions,
  GrantId,
  LiftedBlocks,
  NotBefore,
  pageOf,
  RevokedGrants,
  type SetNotBeforeInput,
  SigningKeyRetirement,
  SourceAddress,
} from '@idgate/schema';
import { ADMIN_CALL, jsonBody, NO_CONTENT, type Page, type PageOptions, queryString } from './admin-http.js';
import { IdgateSdkError } from './errors.js';
import { AuditMethods } from './events.js';

const NOT_BEFORES = pageOf(NotBefore);
const BLOCKED = pageOf(BlockedAddress);
const CLIENT_SESSIONS = pageOf(ClientSessionInfo);
const CLIENT_GRANTS = pageOf(ClientGrantInfo);

/**
 * The methods of {@link IdgateAdminClient} for when something is compromised: retire a signing key
 * at once, revoke everything issued before an instant (globally, per client, per user), list and
 * revoke a client's sessions and grants, list and lift blocked source addresses.
 * @example
 * const admin = createIdgateAdminClient({ baseUrl: 'https://id.example.com', apiKey: adminKey });
 * await admin.setNotBefore({ scope: 'client', subject: 'cl_web' });
 * await admin.retireSigningKey(kid, { rotate: true });
 */
export interface IdgateIncidentMethods {
  /**
   * `POST /admin/v1/signing-keys/{kid}/retire` (scope `keys:retire`): the key leaves JWKS now and
   * every token it signed stops verifying on every replica within a second. The only key that may
   * sign is retired only with `rotate: true` (a new key made in the same step; else a 409
   * `last_signing_key`). Never retried.
   * @example const { retired, created } = await admin.retireSigningKey(kid, { rotate: true });
   */
  retireSigningKey(kid: string, options?: { rotate?: boolean }): Promise<SigningKeyRetirement>;

  /**
   * `GET /admin/v1/not-before` (scope `sessions:read`): every not-before in force.
   * @example const { items } = await admin.listNotBefore();
   */
  listNotBefore(): Promise<Page<NotBefore>>;

  /**
   * `POST /admin/v1/not-before` (scope `sessions:revoke-all`): revokes everything of a scope issued
   * before `before` (default now): tokens, grants, sessions, codes. Never retried.
   * @example await admin.setNotBefore({ scope: 'user', subject: 'alice' });
   */
  setNotBefore(input: SetNotBeforeInput): Promise<NotBefore>;

  /**
   * `GET /admin/v1/clients/{clientId}/sessions`: one page of the live browser sessions that signed
   * in to the client, oldest first.
   * @example const { items } = await admin.listClientSessions('cl_web');
   */
  listClientSessions(clientId: string, page?: PageOptions): Promise<Page<ClientSessionInfo>>;

  /**
   * `DELETE /admin/v1/clients/{clientId}/sessions`: ends every session that signed in to the
   * client (signing those browsers out of everything) and revokes the grants made in them. Never retried.
   * @example const { ended } = await admin.revokeClientSessions('cl_web');
   */
  revokeClientSessions(clientId: string): Promise<EndedSessions>;

  /**
   * `GET /admin/v1/clients/{clientId}/grants`: one page of the client's live grants, oldest first.
   * @example const { items } = await admin.listClientGrants('cl_web');
   */
  listClientGrants(clientId: string, page?: PageOptions): Promise<Page<ClientGrantInfo>>;

  /**
   * `DELETE /admin/v1/clients/{clientId}/grants/{id}`: revokes one grant of the client. Never retried.
   * @example await admin.revokeClientGrant('cl_web', grantId);
   */
  revokeClientGrant(clientId: string, id: string): Promise<void>;

  /**
   * `DELETE /admin/v1/clients/{clientId}/grants`: revokes every grant of the client. Never retried.
   * @example const { revoked } = await admin.revokeClientGrants('cl_web');
   */
  revokeClientGrants(clientId: string): Promise<RevokedGrants>;

  /**
   * `GET /admin/v1/blocked-addresses` (scope `users:read`): the source addresses sign-ins are
   * refused from now.
   * @example const { items } = await admin.listBlockedAddresses();
   */
  listBlockedAddresses(): Promise<Page<BlockedAddress>>;

  /**
   * `DELETE /admin/v1/blocked-addresses/{address}` (scope `users:unlock`): lifts the block of one
   * address; answers it in `lifted` when it was blocked. Never retried.
   * @example await admin.liftAddressBlock('203.0.113.7');
   */
  liftAddressBlock(address: string): Promise<LiftedBlocks>;

  /**
   * `DELETE /admin/v1/blocked-addresses` (scope `users:unlock`): lifts every block. Never retried.
   * @example const { lifted } = await admin.liftAddressBlocks();
   */
  liftAddressBlocks(): Promise<LiftedBlocks>;
}

/** An id as a path segment, checked first so that nothing like `..` or `/` can change the path. */
function segment(id: string, what: string, endpoint: string): string {
  if (typeof id !== 'string' || !/^[A-Za-z0-9_.-]{1,128}$/.test(id) || id === '.' || id === '..') {
    throw new IdgateSdkError(`${what} must be 1–128 letters, digits, _ . or -`, { endpoint });
  }
  return id;
}

function pageQuery(page: PageOptions, endpoint: string): string {
  if (page.limit !== undefined && (!Number.isInteger(page.limit) || page.limit < 1 || page.limit > 500)) {
    throw new IdgateSdkError('limit must be a whole number from 1 to 500', { endpoint });
  }
  return queryString({ limit: page.limit, cursor: page.cursor });
}

/** The incident response methods of the admin client; its class extends this one. */
export class IncidentMethods extends AuditMethods implements IdgateIncidentMethods {
  retireSigningKey(kid: string, options: { rotate?: boolean } = {}): Promise<SigningKeyRetirement> {
    const endpoint = 'POST /admin/v1/signing-keys/{kid}/retire';
    return this[ADMIN_CALL]({
      method: 'POST',
      path: `admin/v1/signing-keys/${segment(kid, 'kid', endpoint)}/retire`,
      headers: { 'content-type': 'application/json' },
      body: jsonBody(options.rotate === undefined ? {} : { rotate: options.rotate }, endpoint),
      schema: SigningKeyRetirement,
      schemaName: 'SigningKeyRetirement',
      retry: 0,
    });
  }

  listNotBefore(): Promise<Page<NotBefore>> {
    return this[ADMIN_CALL]({
      method: 'GET',
      path: 'admin/v1/not-before',
      schema: NOT_BEFORES,
      schemaName: '{ items: NotBefore[], nextCursor }',
    });
  }

  setNotBefore(input: SetNotBeforeInput): Promise<NotBefore> {
    return this[ADMIN_CALL]({
      method: 'POST',
      path: 'admin/v1/not-before',
      headers: { 'content-type': 'application/json' },
      body: jsonBody(input, 'POST /admin/v1/not-before'),
      schema: NotBefore,
      schemaName: 'NotBefore',
      retry: 0,
    });
  }

  listClientSessions(clientId: string, page: PageOptions = {}): Promise<Page<ClientSessionInfo>> {
    const endpoint = 'GET /admin/v1/clients/{clientId}/sessions';
    return this[ADMIN_CALL]({
      method: 'GET',
      path: `admin/v1/clients/${segment(clientId, 'clientId', endpoint)}/sessions${pageQuery(page, endpoint)}`,
      schema: CLIENT_SESSIONS,
      schemaName: '{ items: ClientSessionInfo[], nextCursor }',
    });
  }

  revokeClientSessions(clientId: string): Promise<EndedSessions> {
    const endpoint = 'DELETE /admin/v1/clients/{clientId}/sessions';
    return this[ADMIN_CALL]({
      method: 'DELETE',
      path: `admin/v1/clients/${segment(clientId, 'clientId', endpoint)}/sessions`,
      schema: EndedSessions,
      schemaName: 'EndedSessions',
      retry: 0,
    });
  }

  listClientGrants(clientId: string, page: PageOptions = {}): Promise<Page<ClientGrantInfo>> {
    const endpoint = 'GET /admin/v1/clients/{clientId}/grants';
    return this[ADMIN_CALL]({
      method: 'GET',
      path: `admin/v1/clients/${segment(clientId, 'clientId', endpoint)}/grants${pageQuery(page, endpoint)}`,
      schema: CLIENT_GRANTS,
      schemaName: '{ items: ClientGrantInfo[], nextCursor }',
    });
  }

  async revokeClientGrant(clientId: string, id: string): Promise<void> {
    const endpoint = 'DELETE /admin/v1/clients/{clientId}/grants/{id}';
    if (typeof id !== 'string' || !GrantId.safeParse(id).success)
      throw new IdgateSdkError('id must be 1–64 letters, digits and -', { endpoint });
    await this[ADMIN_CALL]({
      method: 'DELETE',
      path: `admin/v1/clients/${segment(clientId, 'clientId', endpoint)}/grants/${id}`,
      schema: NO_CONTENT,
      schemaName: 'an empty response',
      retry: 0,
    });
  }

  revokeClientGrants(clientId: string): Promise<RevokedGrants> {
    const endpoint = 'DELETE /admin/v1/clients/{clientId}/grants';
    return this[ADMIN_CALL]({
      method: 'DELETE',
      path: `admin/v1/clients/${segment(clientId, 'clientId', endpoint)}/grants`,
      schema: RevokedGrants,
      schemaName: 'RevokedGrants',
      retry: 0,
    });
  }

  listBlockedAddresses(): Promise<Page<BlockedAddress>> {
    return this[ADMIN_CALL]({
      method: 'GET',
      path: 'admin/v1/blocked-addresses',
      schema: BLOCKED,
      schemaName: '{ items: BlockedAddress[], nextCursor }',
    });
  }

  liftAddressBlock(address: string): Promise<LiftedBlocks> {
    const endpoint = 'DELETE /admin/v1/blocked-addresses/{address}';
    if (typeof address !== 'string' || !SourceAddress.safeParse(address).success)
      throw new IdgateSdkError('address must be an IPv4 or IPv6 address', { endpoint });
    return this[ADMIN_CALL]({
      method: 'DELETE',
      path: `admin/v1/blocked-addresses/${encodeURIComponent(address)}`,
      schema: LiftedBlocks,
      schemaName: 'LiftedBlocks',
      retry: 0,
    });
  }

  liftAddressBlocks(): Promise<LiftedBlocks> {
    return this[ADMIN_CALL]({
      method: 'DELETE',
      path: 'admin/v1/blocked-addresses',
      schema: LiftedBlocks,
      schemaName: 'LiftedBlocks',
      retry: 0,
    });
  }
}
