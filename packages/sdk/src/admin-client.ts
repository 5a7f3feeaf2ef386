import type { IdgateClusterMethods } from './clusters.js';
import type { IdgateClientAdminMethods } from './credentials.js';
import { DeclarationMethods, type IdgateDeclarationMethods } from './declarations.js';
import { IdgateSdkError } from './errors.js';
import type { IdgateAuditMethods } from './events.js';
import type { IdgateFederationMethods } from './federation-types.js';
import { createTransport } from './http.js';
import type { IdgateIncidentMethods } from './incident.js';
import type { IdgateSessionMethods } from './sessions.js';
import type { IdgateTrustMethods } from './trusts.js';
import type { IdgateClientOptions } from './types.js';
import type { IdgateUserMethods } from './users.js';

/**
 * Options of {@link createIdgateAdminClient}: those of {@link IdgateClientOptions}, with the API
 * key required.
 * @example
 * const options: IdgateAdminClientOptions = { baseUrl: 'http://localhost:8080', apiKey: 'idg_…', retry: 2 };
 */
export interface IdgateAdminClientOptions extends Omit<IdgateClientOptions, 'apiKey'> {
  /**
   * An idgate API key, sent as a Bearer token with every call: each operation needs its scope
   * (`users:read`, `clients:write`, …; `admin` holds them all).
   */
  apiKey: string;
}

/**
 * A typed client of one idgate server's admin API (`/admin/v1`): users and groups, sessions and
 * grants, OAuth clients, API keys, signing keys, clusters, identity providers and linked
 * identities, the audit trail, incident response (retiring a signing key at once, not-befores,
 * blocked addresses), and declarations applied as `idgate apply` does. Every call sends the admin API key; every response is validated
 * with `@idgate/schema`. Refusals are `IdgateHttpError`s carrying the RFC 9457 problem, whose
 * `code` says why (a 401 for a missing or revoked key, a 403 `api_key_scope` for a key without
 * the operation's scope, which the problem's `scope` names).
 * @example
 * const admin = createIdgateAdminClient({ baseUrl: 'http://localhost:8080', apiKey: adminKey });
 * const { password } = await admin.createUser({ username: 'alice', groups: ['dev'] });
 */
export interface IdgateAdminClient
  extends IdgateUserMethods,
    IdgateSessionMethods,
    IdgateClientAdminMethods,
    IdgateClusterMethods,
    IdgateTrustMethods,
    IdgateFederationMethods,
    IdgateAuditMethods,
    IdgateIncidentMethods,
    IdgateDeclarationMethods {}

/**
 * Creates a client of the admin API of the idgate server at `baseUrl`, with an API key holding
 * the scopes of the operations it calls (`idgate init` prints one with `admin`, which holds them
 * all; `idgate api-keys add NAME --scope S` or `--role R` makes more).
 * Token grants, TokenReview and the other endpoints a relying party or a resource server calls are
 * {@link createIdgateClient}'s: a service that only reviews tokens bundles none of the admin
 * methods. Runs in any runtime with `fetch`.
 * @throws {IdgateSdkError} when `apiKey` is missing or empty, `baseUrl` is not an absolute http(s)
 * URL, or `timeoutMs`/`retry` is invalid.
 * @example
 * import { createIdgateAdminClient } from '@idgate/sdk';
 *
 * const admin = createIdgateAdminClient({ baseUrl: 'http://localhost:8080', apiKey: process.env.IDGATE_ADMIN_KEY ?? '' });
 * const { cluster, apiKey } = await admin.createCluster({ name: 'prod' });
 * for await (const event of admin.eachEvent({ type: 'sign-in.failed' })) console.log(event.id);
 */
export function createIdgateAdminClient(options: IdgateAdminClientOptions): IdgateAdminClient {
  if (typeof options.apiKey !== 'string' || options.apiKey === '') {
    throw new IdgateSdkError('createIdgateAdminClient needs an API key: pass { apiKey }');
  }
  return new AdminClient(createTransport(options), options.apiKey);
}

/** Every admin method, over one transport and API key (the chain's root holds them). */
class AdminClient extends DeclarationMethods implements IdgateAdminClient {}
