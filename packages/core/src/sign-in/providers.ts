import type { IdentityProviderConfig } from '@idgate/schema';
import type { Connector } from '../connectors/types.js';
import type { IdentityMappingPolicy } from './external.js';

/** An identity provider ready to sign people in: its settings and the connector that reaches it. */
export interface IdentityProvider {
  config: IdentityProviderConfig;
  /** Declared in the configuration file, or stored (changed through the admin API). */
  source: 'config' | 'database';
  connector: Connector;
  /** What goes before each upstream group name. */
  groupsPrefix: string;
}

/**
 * The identity providers a host offers (the server: those of its configuration file and of its
 * database, with their connectors built once — including the LDAP one, which needs sockets).
 */
export interface IdentityProviders {
  /** The provider called `name` (any case), enabled or not. */
  get(name: string): Promise<IdentityProvider | undefined>;
  /** Every enabled provider. */
  enabled(): Promise<IdentityProvider[]>;
}

/**
 * How `provider` maps its identities to local users.
 * @example const mapped = await mapExternalIdentity(identity, mappingPolicy(provider), context);
 */
export function mappingPolicy(provider: IdentityProvider): IdentityMappingPolicy {
  return {
    provider: provider.config.name,
    mapping: provider.config.mapping,
    linkByVerifiedEmail: provider.config.linkByVerifiedEmail,
    groupsPrefix: provider.groupsPrefix,
    trustUpstreamMfa: provider.config.type === 'oidc' ? provider.config.trustUpstreamMfa : [],
    trustEmailVerified: provider.config.type !== 'ldap' && provider.config.trustEmailVerified === true,
  };
}
