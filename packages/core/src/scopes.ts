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
