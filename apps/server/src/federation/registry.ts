import {
  type Connector,
  createGitHubConnector,
  createGitLabConnector,
  createOidcConnector,
  type IdentityProvider,
  type IdentityProviderRecord,
  type IdentityProviderRepository,
  type IdentityProviders,
} from '@idgate/core';
import { openProviderConfig } from '@idgate/core/admin';
import type { IdentityProviderConfig } from '@idgate/schema';
import { createLdapConnector, type LdapConnectorOptions } from '../connectors/ldap.js';

/** How connectors reach their upstreams (traced `fetch` and LDAP clients when tracing is on). */
export interface ConnectorOptions {
  fetch?: typeof fetch;
  ldapClientFactory?: LdapConnectorOptions['clientFactory'];
}

/** An identity provider ready to use. */
export type ResolvedProvider = IdentityProvider;

export function connectorFor(config: IdentityProviderConfig, options: ConnectorOptions = {}): Connector {
  const upstream = options.fetch === undefined ? {} : { fetch: options.fetch };
  switch (config.type) {
    case 'oidc':
      return createOidcConnector(config, upstream);
    case 'github':
      return createGitHubConnector(config, upstream);
    case 'gitlab':
      return createGitLabConnector(config, upstream);
    case 'ldap':
      return createLdapConnector(
        config,
        options.ldapClientFactory === undefined ? {} : { clientFactory: options.ldapClientFactory },
      );
  }
}

/**
 * The identity providers of this server (core's `IdentityProviders` port): those declared in the
 * YAML file (read-only; they win a name clash) and those in the database. Connectors are kept
 * between requests (an OIDC connector caches its upstream's discovery and keys) and rebuilt when a
 * stored provider changes.
 */
export class ProviderRegistry implements IdentityProviders {
  readonly #fromFile: Map<string, ResolvedProvider>;
  readonly #cache = new Map<string, { stamp: number; provider: ResolvedProvider }>();
  readonly #stored: IdentityProviderRepository;
  readonly #secret: string;
  readonly #connectors: ConnectorOptions;

  constructor(options: {
    /** The providers of the configuration file. */
    declared: readonly IdentityProviderConfig[];
    stored: IdentityProviderRepository;
    /** Opens the sealed secrets of stored providers. */
    secret: string;
    connectors?: ConnectorOptions;
  }) {
    this.#stored = options.stored;
    this.#secret = options.secret;
    this.#connectors = options.connectors ?? {};
    this.#fromFile = new Map(
      options.declared.map((config) => [config.name, this.#resolve(config, 'config')]),
    );
  }

  #resolve(config: IdentityProviderConfig, source: 'config' | 'database'): ResolvedProvider {
    return {
      config,
      source,
      connector: connectorFor(config, this.#connectors),
      groupsPrefix: config.groupsPrefix ?? `${config.name}:`,
    };
  }

  async #fromDatabase(record: IdentityProviderRecord): Promise<ResolvedProvider> {
    const stamp = record.updatedAt.getTime();
    const cached = this.#cache.get(record.name);
    if (cached?.stamp === stamp) return cached.provider;
    const config = await openProviderConfig(record, this.#secret);
    const provider = this.#resolve({ ...config, disabled: record.disabled }, 'database');
    this.#cache.set(record.name, { stamp, provider });
    return provider;
  }

  /** The provider called `name` (any case), enabled or not. */
  async get(name: string): Promise<ResolvedProvider | undefined> {
    const lower = name.toLowerCase();
    const fromFile = this.#fromFile.get(lower);
    if (fromFile !== undefined) return fromFile;
    if (!/^[a-z][a-z0-9-]{0,62}$/.test(lower)) return undefined;
    const record = await this.#stored.findByName(lower);
    return record === undefined ? undefined : this.#fromDatabase(record);
  }

  /** Every enabled provider, file-declared first, then by name. */
  async enabled(): Promise<ResolvedProvider[]> {
    const stored = await this.#stored.list();
    const fromDatabase = await Promise.all(
      stored.filter((record) => !this.#fromFile.has(record.name)).map((record) => this.#fromDatabase(record)),
    );
    return [...this.#fromFile.values(), ...fromDatabase].filter((provider) => !provider.config.disabled);
  }
}
