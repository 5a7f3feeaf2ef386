import { OAuthProtocolError } from './errors.js';
import type { ClientRecord } from './model.js';

/**
 * The scopes about an end-user that idgate understands (OIDC Core §5.4, plus `groups` and
 * `offline_access`): what discovery advertises, what a federated sign-in's token set may carry,
 * and what means nothing when a client acts for itself.
 */
export const USER_SCOPES = ['openid', 'profile', 'email', 'groups', 'offline_access'] as const;

// RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E )
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;

/**
 * Splits a `scope` parameter into its distinct tokens, in order.
 * @throws OAuthProtocolError invalid_scope when a token breaks RFC 6749 §3.3 syntax.
 * @example parseScope('openid  profile openid') // ['openid', 'profile']
 */
export function parseScope(scope: string | undefined): string[] | undefined {
  if (scope === undefined) return undefined;
  const tokens = scope.split(' ').filter((token) => token !== '');
  for (const token of tokens) {
    if (!SCOPE_TOKEN.test(token))
      throw new OAuthProtocolError('invalid_scope', 'scope contains characters RFC 6749 §3.3 does not allow');
  }
  return [...new Set(tokens)];
}

/**
 * The scope a request gets: what it asked for, if all of it is allowed, or everything allowed when
 * it asked for nothing (RFC 6749 §3.3 lets the server pick a default).
 * @throws OAuthProtocolError invalid_scope naming the scopes that are not allowed.
 * @example grantedScope(['openid'], ['openid', 'email']) // ['openid']
 */
export function grantedScope(requested: string[] | undefined, allowed: readonly string[]): string[] {
  if (requested === undefined) return [...allowed];
  const refused = requested.filter((scope) => !allowed.includes(scope));
  if (refused.length > 0) {
    throw new OAuthProtocolError('invalid_scope', `scope not allowed for this client: ${refused.join(' ')}`);
  }
  return requested;
}

/**
 * The `aud` of a client's access token: the requested resources (RFC 8707), each of which must be
 * among the client's audiences; else the client's audiences; else the client itself.
 * @throws OAuthProtocolError invalid_target for a resource the client may not ask for.
 * @example tokenAudience(undefined, client) // [client.clientId] when it has no audiences
 */
export function tokenAudience(resource: string | string[] | undefined, client: ClientRecord): string[] {
  if (resource !== undefined) {
    const resources = [...new Set(Array.isArray(resource) ? resource : [resource])];
    const refused = resources.filter((value) => !client.audiences.includes(value));
    if (resources.length === 0 || refused.length > 0) {
      throw new OAuthProtocolError(
        'invalid_target',
        `resource not allowed for this client: ${refused.join(' ')}`,
      );
    }
    return resources;
  }
  return client.audiences.length > 0 ? [...client.audiences] : [client.clientId];
}

/**
 * The resources a sign-in of `client` approves (RFC 8707), as the consent and device pages name
 * them and the grant records them: those it asked for, each among the client's audiences, else
 * all the client's audiences; null for a client without audiences (its tokens are for itself).
 * @throws OAuthProtocolError invalid_target for a resource the client may not ask for.
 * @example approvedResources(undefined, kubectl) // ['kubernetes:prod', 'kubernetes:stage']
 */
export function approvedResources(
  resource: string | string[] | undefined,
  client: ClientRecord,
): string[] | null {
  if (resource === undefined) return client.audiences.length > 0 ? [...client.audiences] : null;
  return tokenAudience(resource, client);
}

/**
 * The audiences a grant covers, recorded when it opens: the resources its sign-in approved, or
 * the client's default audience (its audiences, else itself) when there were none to approve.
 * @example grantResources(['kubernetes:prod'], kubectl) // ['kubernetes:prod']
 */
export function grantResources(approved: readonly string[] | null, client: ClientRecord): string[] {
  return approved === null ? tokenAudience(undefined, client) : [...approved];
}

/**
 * The `aud` of a token from a grant that covers `covered` (RFC 8707 §2.2: a token request may
 * narrow what the grant covers, never widen it): the requested resources when each is covered and
 * still allowed for the client, else everything covered that is still allowed (a client's own id
 * always is).
 * @throws OAuthProtocolError invalid_target for a resource the grant does not cover, or a grant
 * none of whose resources the client may still ask for.
 * @example tokenAudienceWithin(['kubernetes:prod'], ['kubernetes:prod', 'kubernetes:stage'], kubectl) // ['kubernetes:prod']
 */
export function tokenAudienceWithin(
  requested: readonly string[] | undefined,
  covered: readonly string[],
  client: ClientRecord,
): string[] {
  if (requested !== undefined && requested.length > 0) {
    const outside = [...new Set(requested)].filter((value) => !covered.includes(value));
    if (outside.length > 0) {
      throw new OAuthProtocolError(
        'invalid_target',
        `resource not approved for this grant: ${outside.join(' ')} (it covers ${covered.join(' ')}); sign in again to ask for it`,
      );
    }
    return tokenAudience([...requested], client);
  }
  const allowed = covered.filter((value) => value === client.clientId || client.audiences.includes(value));
  if (allowed.length === 0) {
    throw new OAuthProtocolError(
      'invalid_target',
      `none of the resources this grant covers is still allowed for this client: ${covered.join(' ')}`,
    );
  }
  return allowed;
}
