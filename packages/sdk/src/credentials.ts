import {
  ApiKey,
  type CreateApiKeyInput,
  CreatedApiKey,
  CreatedClient,
  OAuthClient,
  type RegisterClientRequest,
  type RotateClientSecretRequest,
  RotatedClientSecret,
  SigningKeyInfo,
  SigningKeyRotation,
  type UpdateApiKeyInput,
  type UpdateClientInput,
} from '@idgate/schema';
import { ADMIN_CALL, jsonBody, NO_CONTENT, type Page, type PageOptions, queryString } from './admin-http.js';
import { IdgateSdkError, type SchemaIssue } from './errors.js';
import type { Parser } from './http.js';
import { SessionMethods } from './sessions.js';

/**
 * The methods of {@link IdgateAdminClient} about OAuth clients, API keys and signing keys
 * (`/admin/v1/clients`, `/api-keys`, `/signing-keys`). Refusals are `IdgateHttpError`s whose `problem.code` says why (`client_not_found`,
 * `invalid_client` naming the field, `precondition_failed`, `client_read_only`).
 * @example
 * const admin = createIdgateAdminClient({ baseUrl: 'https://id.example.com', apiKey: adminKey });
 * const { clientId, clientSecret } = await admin.createClient({ name: 'CI' });
 */
export interface IdgateClientAdminMethods {
  /**
   * `GET /admin/v1/clients`: one page of clients by creation time, never a secret.
   * @example const { items, nextCursor } = await admin.listClients({ limit: 50 });
   */
  listClients(options?: PageOptions): Promise<Page<OAuthClient>>;

  /**
   * `GET /admin/v1/clients/{clientId}`, with its `etag` for {@link updateClient}; a 404
   * (`client_not_found`) when there is none.
   * @example const client = await admin.getClient('cl_abcdefghijklmnop');
   */
  getClient(clientId: string): Promise<OAuthClient>;

  /**
   * `POST /admin/v1/clients`: registers a client. Defaults follow the grants; inconsistent
   * settings are a 400 (`invalid_client`) naming the field. A confidential client's
   * `clientSecret` is answered only this once. Never retried.
   * @example const { clientId, clientSecret } = await admin.createClient({ name: 'CI', grantTypes: ['client_credentials'] });
   */
  createClient(input: RegisterClientRequest): Promise<CreatedClient>;

  /**
   * `PATCH /admin/v1/clients/{clientId}`: changes the fields given. With `ifMatch` (an `etag`
   * read before) a concurrent change makes it a 412 (`precondition_failed`) instead of being
   * overwritten. The kubectl client's audiences are a 409 (`client_read_only`). `requireMfa: true`
   * makes every sign-in for the client need a second factor.
   * @example await admin.updateClient(client.clientId, { trusted: true }, { ifMatch: client.etag });
   */
  updateClient(
    clientId: string,
    patch: UpdateClientInput,
    options?: { ifMatch?: string },
  ): Promise<OAuthClient>;

  /**
   * `POST /admin/v1/clients/{clientId}/secret`: a new secret, answered once; the previous one
   * keeps working for `gracePeriod` seconds (default 0). Never retried.
   * @example const { clientSecret } = await admin.rotateClientSecret(id, { gracePeriod: 3600 });
   */
  rotateClientSecret(clientId: string, input?: RotateClientSecretRequest): Promise<RotatedClientSecret>;

  /**
   * `DELETE /admin/v1/clients/{clientId}`: deletes a client and revokes its grants. Never retried.
   * @example await admin.deleteClient('cl_abcdefghijklmnop');
   */
  deleteClient(clientId: string): Promise<void>;

  /**
   * `GET /admin/v1/api-keys`: one page of API keys (prefixes, never keys), revoked ones included.
   * @example const { items } = await admin.listApiKeys();
   */
  listApiKeys(options?: PageOptions): Promise<Page<ApiKey>>;

  /**
   * `GET /admin/v1/api-keys/{id}`: one key by its id or prefix, revoked and expired ones
   * included (never the key); a 404 (`api_key_not_found`) when there is none.
   * @example const { scopes, expiresAt } = await admin.getApiKey('idg_ab12cd34');
   */
  getApiKey(id: string): Promise<ApiKey>;

  /**
   * `POST /admin/v1/api-keys`: a new key of `scopes` and the scopes of `roles` (`auditor`,
   * `helpdesk`, `operator`, `admin`), answered once; with `expiresIn` (seconds) it stops working
   * then. The calling key must hold every scope it gives: a 403 (`api_key_scope`, the problem's
   * `scope` naming the first it lacks) otherwise. Never retried.
   * @example const { key } = await admin.createApiKey({ name: 'ci', scopes: ['clients:read', 'clients:write'], expiresIn: 86400 });
   * @example const { key } = await admin.createApiKey({ name: 'desk', roles: ['helpdesk'] });
   */
  createApiKey(input: CreateApiKeyInput): Promise<CreatedApiKey>;

  /**
   * `PATCH /admin/v1/api-keys/{id}`: renames a key (by id or prefix) or changes when it stops
   * working — `expiresIn` seconds from now, or `expiresAt` (null: never); its scopes never change.
   * Lengthening a key's life needs every scope of that key (403 `api_key_scope` otherwise); a
   * revoked key is a 404 (`api_key_not_found`). Never retried.
   * @example const renamed = await admin.updateApiKey(key.id, { name: 'ci (2026)', expiresIn: 30 * 86400 });
   */
  updateApiKey(id: string, patch: UpdateApiKeyInput): Promise<ApiKey>;

  /**
   * `DELETE /admin/v1/api-keys/{id}`: revokes a key by id or prefix. Never retried.
   * @example await admin.revokeApiKey(key.id);
   */
  revokeApiKey(id: string): Promise<void>;

  /**
   * `GET /admin/v1/signing-keys`: every signing key, newest first, with its state.
   * @example const { items } = await admin.listSigningKeys();
   */
  listSigningKeys(): Promise<Page<SigningKeyInfo>>;

  /**
   * `POST /admin/v1/signing-keys/rotate`: rotates the signing keys; answers the new key and
   * the kids it retired. Never retried.
   * @example const { created, retired } = await admin.rotateSigningKeys();
   */
  rotateSigningKeys(): Promise<SigningKeyRotation>;
}

/** `{ items, nextCursor }` with each item checked by `item`. */
function pageOf<T>(item: Parser<T>): Parser<Page<T>> {
  return {
    safeParse(input) {
      const body = typeof input === 'object' && input !== null ? (input as Record<string, unknown>) : {};
      const { items, nextCursor } = body;
      const issues: SchemaIssue[] = [];
      if (!Array.isArray(items))
        issues.push({
          code: 'custom',
          path: ['items'],
          message: 'must be an array',
          input: items,
        } as SchemaIssue);
      if (nextCursor !== null && typeof nextCursor !== 'string')
        issues.push({
          code: 'custom',
          path: ['nextCursor'],
          message: 'must be a string or null',
          input: nextCursor,
        } as SchemaIssue);
      const parsed: T[] = [];
      for (const [index, value] of (Array.isArray(items) ? items : []).entries()) {
        const result = item.safeParse(value);
        if (result.success) parsed.push(result.data);
        else issues.push(...result.error.issues.map((i) => ({ ...i, path: ['items', index, ...i.path] })));
      }
      return issues.length > 0
        ? { success: false, error: { issues } }
        : { success: true, data: { items: parsed, nextCursor: nextCursor as string | null } };
    },
  };
}

const CLIENTS = pageOf(OAuthClient);
const API_KEYS = pageOf(ApiKey);
const SIGNING_KEYS = pageOf(SigningKeyInfo);

/** The client, API key and signing key methods; the admin client's class extends this one. */
export class ClientAdminMethods extends SessionMethods implements IdgateClientAdminMethods {
  listClients(options: PageOptions = {}): Promise<Page<OAuthClient>> {
    return this[ADMIN_CALL]({
      method: 'GET',
      path: `admin/v1/clients${queryString(options)}`,
      schema: CLIENTS,
      schemaName: '{ items: OAuthClient[], nextCursor }',
    });
  }

  getClient(clientId: string): Promise<OAuthClient> {
    return this[ADMIN_CALL]({
      method: 'GET',
      path: `admin/v1/clients/${segment(clientId, 'GET /admin/v1/clients/{clientId}')}`,
      schema: OAuthClient,
      schemaName: 'OAuthClient',
    });
  }

  createClient(input: RegisterClientRequest): Promise<CreatedClient> {
    return this[ADMIN_CALL]({
      method: 'POST',
      path: 'admin/v1/clients',
      schema: CreatedClient,
      schemaName: 'CreatedClient',
      headers: { 'content-type': 'application/json' },
      body: jsonBody(input, 'POST /admin/v1/clients'),
      retry: 0,
    });
  }

  updateClient(
    clientId: string,
    patch: UpdateClientInput,
    options: { ifMatch?: string } = {},
  ): Promise<OAuthClient> {
    const endpoint = 'PATCH /admin/v1/clients/{clientId}';
    return this[ADMIN_CALL]({
      method: 'PATCH',
      path: `admin/v1/clients/${segment(clientId, endpoint)}`,
      schema: OAuthClient,
      schemaName: 'OAuthClient',
      headers: {
        'content-type': 'application/json',
        ...(options.ifMatch === undefined ? {} : { 'if-match': options.ifMatch }),
      },
      body: jsonBody(patch, endpoint),
      retry: 0,
    });
  }

  rotateClientSecret(clientId: string, input: RotateClientSecretRequest = {}): Promise<RotatedClientSecret> {
    const endpoint = 'POST /admin/v1/clients/{clientId}/secret';
    return this[ADMIN_CALL]({
      method: 'POST',
      path: `admin/v1/clients/${segment(clientId, endpoint)}/secret`,
      schema: RotatedClientSecret,
      schemaName: 'RotatedClientSecret',
      headers: { 'content-type': 'application/json' },
      body: jsonBody(input, endpoint),
      retry: 0,
    });
  }

  async deleteClient(clientId: string): Promise<void> {
    await this[ADMIN_CALL]({
      method: 'DELETE',
      path: `admin/v1/clients/${segment(clientId, 'DELETE /admin/v1/clients/{clientId}')}`,
      schema: NO_CONTENT,
      schemaName: 'an empty response',
      retry: 0,
    });
  }

  listApiKeys(options: PageOptions = {}): Promise<Page<ApiKey>> {
    return this[ADMIN_CALL]({
      method: 'GET',
      path: `admin/v1/api-keys${queryString(options)}`,
      schema: API_KEYS,
      schemaName: '{ items: ApiKey[], nextCursor }',
    });
  }

  getApiKey(id: string): Promise<ApiKey> {
    return this[ADMIN_CALL]({
      method: 'GET',
      path: `admin/v1/api-keys/${segment(id, 'GET /admin/v1/api-keys/{id}')}`,
      schema: ApiKey,
      schemaName: 'ApiKey',
    });
  }

  updateApiKey(id: string, patch: UpdateApiKeyInput): Promise<ApiKey> {
    const endpoint = 'PATCH /admin/v1/api-keys/{id}';
    return this[ADMIN_CALL]({
      method: 'PATCH',
      path: `admin/v1/api-keys/${segment(id, endpoint)}`,
      schema: ApiKey,
      schemaName: 'ApiKey',
      headers: { 'content-type': 'application/json' },
      body: jsonBody(patch, endpoint),
      retry: 0,
    });
  }

  createApiKey(input: CreateApiKeyInput): Promise<CreatedApiKey> {
    return this[ADMIN_CALL]({
      method: 'POST',
      path: 'admin/v1/api-keys',
      schema: CreatedApiKey,
      schemaName: 'CreatedApiKey',
      headers: { 'content-type': 'application/json' },
      body: jsonBody(input, 'POST /admin/v1/api-keys'),
      retry: 0,
    });
  }

  async revokeApiKey(id: string): Promise<void> {
    await this[ADMIN_CALL]({
      method: 'DELETE',
      path: `admin/v1/api-keys/${segment(id, 'DELETE /admin/v1/api-keys/{id}')}`,
      schema: NO_CONTENT,
      schemaName: 'an empty response',
      retry: 0,
    });
  }

  listSigningKeys(): Promise<Page<SigningKeyInfo>> {
    return this[ADMIN_CALL]({
      method: 'GET',
      path: 'admin/v1/signing-keys',
      schema: SIGNING_KEYS,
      schemaName: '{ items: SigningKeyInfo[], nextCursor }',
    });
  }

  rotateSigningKeys(): Promise<SigningKeyRotation> {
    return this[ADMIN_CALL]({
      method: 'POST',
      path: 'admin/v1/signing-keys/rotate',
      schema: SigningKeyRotation,
      schemaName: 'SigningKeyRotation',
      retry: 0,
    });
  }
}

/** An id as a path segment, checked first so that nothing like `..` or `/` can change the path. */
function segment(id: string, endpoint: string): string {
  if (typeof id !== 'string' || !/^[A-Za-z0-9_.-]{1,128}$/.test(id) || id === '.' || id === '..') {
    throw new IdgateSdkError('the id must be 1–128 letters, digits, _ . or -', { endpoint });
  }
  return id;
}
