import {
  IDENTITY_PROVIDER_SECRETS,
  IdentityProvider,
  type IdentityProviderConfigInput,
  IdentityProviderName,
  type IdentityProviderPatch,
  LinkedIdentity,
  TokenResponse,
  Username,
} from '@idgate/schema';
import { ADMIN_CALL, ADMIN_STREAM, adminSend, adminStream, jsonBody, NO_CONTENT } from './admin-http.js';
import { IdgateSdkError, type SchemaIssue } from './errors.js';
import type { IdgateFederationMethods, UpdateIdentityProviderOptions } from './federation-types.js';
import { type Call, type Parser, send, type TransportOptions } from './http.js';

/** Callback parameters that are credentials: redacted from every error message. */
const CALLBACK_SECRETS = ['code', 'access_token'] as const;

/**
 * `{ items: T[] }` with each item checked by `item`, issues pathed from the root (the SDK does not
 * depend on zod itself).
 */
export function itemsOf<T>(item: Parser<T>): Parser<{ items: T[] }> {
  return {
    safeParse(input) {
      const items =
        typeof input === 'object' && input !== null ? (input as { items?: unknown }).items : undefined;
      if (!Array.isArray(items)) {
        const issue = { code: 'custom', path: ['items'], message: 'must be an array', input: items };
        return { success: false, error: { issues: [issue as SchemaIssue] } };
      }
      const parsed: T[] = [];
      const issues: SchemaIssue[] = [];
      items.forEach((value: unknown, index) => {
        const result = item.safeParse(value);
        if (result.success) parsed.push(result.data);
        else issues.push(...result.error.issues.map((i) => ({ ...i, path: ['items', index, ...i.path] })));
      });
      return issues.length > 0
        ? { success: false, error: { issues } }
        : { success: true, data: { items: parsed } };
    },
  };
}

const PROVIDERS = itemsOf(IdentityProvider);
const IDENTITIES = itemsOf(LinkedIdentity);

/**
 * The federation methods of the client (see {@link IdgateFederationMethods}); the client class
 * extends this one.
 */
export class FederationMethods implements IdgateFederationMethods {
  readonly #transport: TransportOptions;
  readonly #apiKey: string | undefined;

  constructor(transport: TransportOptions, apiKey: string | undefined) {
    this.#transport = transport;
    this.#apiKey = apiKey;
  }

  async callback(provider: string, query: Record<string, string> | URLSearchParams): Promise<TokenResponse> {
    const endpoint = 'GET /oauth/callback/{provider}';
    if (typeof provider !== 'string' || !IdentityProviderName.safeParse(provider).success) {
      throw new IdgateSdkError(
        'provider must be an identity provider name: lower-case letters, digits and -, starting with a letter',
        { endpoint },
      );
    }
    let params: URLSearchParams;
    try {
      params = new URLSearchParams(query);
    } catch (error) {
      throw new IdgateSdkError('query must be a record of strings or URLSearchParams', {
        endpoint,
        cause: error,
      });
    }
    const search = params.toString();
    const secrets = CALLBACK_SECRETS.flatMap((name) => params.getAll(name));
    return send(this.#transport, {
      method: 'GET',
      path: `oauth/callback/${provider}${search === '' ? '' : `?${search}`}`,
      schema: TokenResponse,
      schemaName: 'TokenResponse',
      secrets: [this.#apiKey, ...secrets],
      retry: 0,
      redirectHint:
        'the sign-in continues an authorization request in a browser (see error.location), so it answers no tokens',
    });
  }

  async listIdentityProviders(): Promise<{ items: IdentityProvider[] }> {
    return this[ADMIN_CALL]('listIdentityProviders', {
      method: 'GET',
      path: 'admin/v1/identity-providers',
      schema: PROVIDERS,
      schemaName: '{ items: IdentityProvider[] }',
    });
  }

  async getIdentityProvider(name: string): Promise<IdentityProvider> {
    return this[ADMIN_CALL]('getIdentityProvider', {
      method: 'GET',
      path: `admin/v1/identity-providers/${providerSegment(name, 'GET /admin/v1/identity-providers/{name}')}`,
      schema: IdentityProvider,
      schemaName: 'IdentityProvider',
    });
  }

  async createIdentityProvider(config: IdentityProviderConfigInput): Promise<IdentityProvider> {
    const secrets = secretsOf(config);
    let body: string;
    try {
      body = JSON.stringify(config);
    } catch (error) {
      throw new IdgateSdkError('config must be serializable as JSON', {
        endpoint: 'POST /admin/v1/identity-providers',
        cause: error,
      });
    }
    return this[ADMIN_CALL](
      'createIdentityProvider',
      {
        method: 'POST',
        path: 'admin/v1/identity-providers',
        schema: IdentityProvider,
        schemaName: 'IdentityProvider',
        headers: { 'content-type': 'application/json' },
        body,
      },
      secrets,
    );
  }

  async updateIdentityProvider(
    name: string,
    patch: IdentityProviderPatch,
    options: UpdateIdentityProviderOptions = {},
  ): Promise<IdentityProvider> {
    const endpoint = 'PATCH /admin/v1/identity-providers/{name}';
    const segment = providerSegment(name, endpoint);
    if (typeof patch !== 'object' || patch === null || Array.isArray(patch))
      throw new IdgateSdkError('patch must be an object of the fields to change', { endpoint });
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (options.ifMatch !== undefined) headers['if-match'] = options.ifMatch;
    return this[ADMIN_CALL](
      'updateIdentityProvider',
      {
        method: 'PATCH',
        path: `admin/v1/identity-providers/${segment}`,
        schema: IdentityProvider,
        schemaName: 'IdentityProvider',
        headers,
        body: jsonBody(patch, endpoint),
        retry: 0,
      },
      secretsOf(patch),
    );
  }

  async setIdentityProviderDisabled(name: string, disabled: boolean): Promise<IdentityProvider> {
    const verb = disabled ? 'disable' : 'enable';
    const segment = providerSegment(name, `POST /admin/v1/identity-providers/{name}/${verb}`);
    return this[ADMIN_CALL]('setIdentityProviderDisabled', {
      method: 'POST',
      path: `admin/v1/identity-providers/${segment}/${verb}`,
      schema: IdentityProvider,
      schemaName: 'IdentityProvider',
    });
  }

  async deleteIdentityProvider(name: string): Promise<void> {
    await this[ADMIN_CALL]('deleteIdentityProvider', {
      method: 'DELETE',
      path: `admin/v1/identity-providers/${providerSegment(name, 'DELETE /admin/v1/identity-providers/{name}')}`,
      schema: NO_CONTENT,
      schemaName: 'an empty response',
      retry: 0,
    });
  }

  async listUserIdentities(username: string): Promise<{ items: LinkedIdentity[] }> {
    const endpoint = 'GET /admin/v1/users/{username}/identities';
    if (typeof username !== 'string' || !Username.safeParse(username).success) {
      throw new IdgateSdkError('username must be a valid idgate username', { endpoint });
    }
    return this[ADMIN_CALL]('listUserIdentities', {
      method: 'GET',
      path: `admin/v1/users/${encodeURIComponent(username)}/identities`,
      schema: IDENTITIES,
      schemaName: '{ items: LinkedIdentity[] }',
    });
  }

  /**
   * Sends an admin call with the API key as Bearer credential, redacting it and `secrets` from
   * every error: the one way every admin method of the client (this class and those that extend
   * it) sends.
   */
  [ADMIN_CALL]<T>(
    method: string,
    call: Omit<Call<T>, 'secrets'>,
    secrets: ReadonlyArray<string | undefined> = [],
  ): Promise<T> {
    return adminSend(this.#transport, this.#apiKey, method, call, secrets);
  }

  /** Opens a streamed admin response (see {@link adminStream}). */
  [ADMIN_STREAM](
    method: string,
    path: string,
    headers: Record<string, string>,
    signal: AbortSignal | undefined,
  ): Promise<Response> {
    return adminStream(this.#transport, this.#apiKey, method, path, headers, signal);
  }
}

/** The secret fields of a provider configuration (or a change of one): redacted from errors. */
function secretsOf(config: unknown): string[] {
  const values = (typeof config === 'object' && config !== null ? config : {}) as Record<string, unknown>;
  return IDENTITY_PROVIDER_SECRETS.map((field) => values[field]).filter(
    (value): value is string => typeof value === 'string',
  );
}

/**
 * `name` as a path segment, checked first (any case: the server looks names up regardless of it),
 * so that nothing like `..` can change the path.
 * @throws IdgateSdkError when it cannot be an identity provider name.
 */
function providerSegment(name: string, endpoint: string): string {
  if (typeof name !== 'string' || !IdentityProviderName.safeParse(name.toLowerCase()).success) {
    throw new IdgateSdkError(
      'name must be an identity provider name: letters, digits and -, starting with a letter',
      { endpoint },
    );
  }
  return name;
}
