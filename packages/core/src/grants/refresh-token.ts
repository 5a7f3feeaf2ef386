import type { RefreshTokenGrantRequest, TokenResponse } from '@idgate/schema';
import { OAuthProtocolError } from '../errors.js';
import type { ClientRecord } from '../model.js';
import { parseScope, tokenAudience } from '../scopes.js';
import { hashSecret } from '../secrets.js';
import type { TokenEndpointContext } from './context.js';
import { revokeGrant } from './revoke-grant.js';
import { issueUserTokens } from './user-tokens.js';

const invalid = (description: string) => new OAuthProtocolError('invalid_grant', description);

/**
 * Refresh token grant (RFC 6749 §6) with rotation: every use returns a new refresh token and
 * retires the old one; presenting a retired one again revokes the whole grant (RFC 9700 §4.14.2).
 * The scope may be narrowed for the new access token, never widened; the new refresh token keeps
 * the grant's scope.
 * @example const tokens = await refreshTokenGrant(request, client, context);
 */
export async function refreshTokenGrant(
  request: RefreshTokenGrantRequest,
  client: ClientRecord,
  context: TokenEndpointContext,
): Promise<TokenResponse> {
  const { storage, clock } = context;
  const hash = await hashSecret(request.refresh_token);
  const presented = await storage.refreshTokens.findByHash(hash);
  // Checked before the token is used, so another client cannot burn a token it stole.
  if (presented === undefined || presented.clientId !== client.clientId)
    throw invalid('the refresh token is not valid');
  if (presented.expiresAt.getTime() <= clock.now()) throw invalid('the refresh token has expired');
  const requested = parseScope(request.scope);
  // RFC 8707 §2.2: a refresh may ask for any audience the client may have — one sign-in serves
  // every cluster; checked before the token rotates, so a bad resource does not burn it.
  const resource = refreshResource(request.resource);
  if (resource !== undefined) tokenAudience(resource, client);
  const widened = requested?.filter((scope) => !presented.scope.includes(scope)) ?? [];
  if (widened.length > 0) {
    throw new OAuthProtocolError('invalid_scope', `scope was not granted: ${widened.join(' ')}`);
  }

  const use = await storage.refreshTokens.use(hash, new Date(clock.now()));
  if (use.status === 'unknown') throw invalid('the refresh token is not valid');
  if (use.status === 'reused') {
    await revokeGrant(
      { clock, storage, maxTokenLifetimeSeconds: context.lifetimes.maxAccessToken },
      presented.grantId,
    );
    throw invalid('the refresh token was already used; the grant is revoked');
  }
  const token = use.token;
  // Reads the grant and records this use in one statement (the admin API lists it).
  const grant = await storage.grants.recordUse(
    token.grantId,
    new Date(clock.now()),
    context.sourceAddress ?? null,
  );
  if (grant === undefined || grant.revokedAt !== null) throw invalid('the grant has been revoked');
  if (grant.expiresAt.getTime() <= clock.now()) throw invalid('the grant has expired');
  const user = await storage.users.findById(token.userId);
  if (user === undefined || user.disabled) throw invalid('the account is not active');

  return issueUserTokens(context, {
    grant,
    client,
    user,
    scope: requested ?? token.scope,
    refreshScope: token.scope,
    ...(resource === undefined ? {} : { resource }),
  });
}

function refreshResource(resource: string | string[] | undefined): string[] | undefined {
  if (resource === undefined) return undefined;
  const values = (Array.isArray(resource) ? resource : [resource]).filter((value) => value !== '');
  return values.length === 0 ? undefined : values;
}
