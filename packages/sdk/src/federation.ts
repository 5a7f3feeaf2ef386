import {
  IDENTITY_PROVIDER_SECRETS,
  IdentityProvider,
  type IdentityProviderConfigInput,
  IdentityProviderName,
  type IdentityProviderPatch,
  LinkedIdentity,
  Username,
} from '@idgate/schema';
import { ADMIN_CALL, ADMIN_STREAM, adminSend, adminStream, jsonBody, NO_CONTENT } from './admin-http.js';
import { IdgateSdkError, type SchemaIssue } from './errors.js';
import type { IdgateFederationMethods, UpdateIdentityProviderOptions } from './federation-types.js';
import type { Call, Parser, TransportOptions } from './http.js';

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
 * The identity provider methods of the admin client (see {@link IdgateFederationMethods}), and the
 * root of its class chain: it holds the transport and the API key every admin method sends with.
 */
export class FederationMethods implements IdgateFederationMethods {
  readonly #transport: TransportOptions;
  readonly #apiKey: string;

  constructor(transport: TransportOptions, apiKey: string) {
    this.#transport = transport;
    this.#apiKey = apiKey;
  }

  async listIdentityProviders(): Promise<{ items: IdentityProvider[] }> {
    return this[ADMIN_CALL]({
      method: 'GET',
      path: 'admin/v1/identity-providers',
      schema: PROVIDERS,
      schemaName: '{ items: IdentityProvider[] }',
    });
  }

  async getIdentityProvider(name: string): Promise<IdentityProvider> {
    return this[ADMIN_CALL]({
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
    return this[ADMIN_CALL]({
      method: 'POST',
      path: `admin/v1/identity-providers/${segment}/${verb}`,
      schema: IdentityProvider,
      schemaName: 'IdentityProvider',
    });
  }

  async deleteIdentityProvider(name: string): Promise<void> {
    await this[ADMIN_CALL]({
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
    return this[ADMIN_CALL]({
      method: 'GET',
      path: `admin/v1/users/${encodeURIComponent(username)}/identities`,
      schema: IDENTITIES,
      schemaName: '{ items: LinkedIdentity[] }',
    });
  }

  /**
   * Sends an admin call with the API key as Bearer credential, redacting it and `secrets` from
   * every error: the one way every admin method of the admin client (this class and those that
   * extend it) sends.
   */
  [ADMIN_CALL]<T>(
    call: Omit<Call<T>, 'secrets'>,
    secrets: ReadonlyArray<string | undefined> = [],
  ): Promise<T> {
    return adminSend(this.#transport, this.#apiKey, call, secrets);
  }

  /** Opens a streamed admin response (see {@link adminStream}). */
  [ADMIN_STREAM](
    path: string,
    headers: Record<string, string>,
    signal: AbortSignal | undefined,
  ): Promise<Response> {
    return adminStream(this.#transport, this.#apiKey, path, headers, signal);
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
