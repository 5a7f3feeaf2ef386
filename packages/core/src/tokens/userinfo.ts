import type { UserInfo } from '@idgate/schema';
import { OAuthProtocolError } from '../errors.js';
import { ACCESS_TOKEN_REJECTION_MESSAGES } from './access-token.js';
import { checkAccessToken, type LiveTokenContext } from './access-token-check.js';
import { userClaims } from './user-claims.js';

function bearerError(error: 'invalid_token' | 'insufficient_scope', description: string): OAuthProtocolError {
  const challenge = `Bearer realm="idgate", error="${error}", error_description="${description}"`;
  return new OAuthProtocolError(error, description, { headers: { 'WWW-Authenticate': challenge } });
}

/**
 * The UserInfo endpoint (OIDC Core §5.3): a live access token of a user, granted `openid`,
 * answers `sub` and the claims its scope releases. Errors follow RFC 6750 §3.1: 401
 * `invalid_token`, 403 `insufficient_scope`, each with its `WWW-Authenticate` challenge; a request
 * without a token gets a bare challenge.
 * @example const claims = await userinfo(accessToken, context);
 */
export async function userinfo(
  accessToken: string | undefined,
  context: LiveTokenContext,
): Promise<UserInfo> {
  if (accessToken === undefined || accessToken === '') {
    throw new OAuthProtocolError('invalid_request', 'an access token is required', {
      status: 401,
      headers: { 'WWW-Authenticate': 'Bearer realm="idgate"' },
    });
  }
  const checked = await checkAccessToken(accessToken, context);
  if (!checked.ok) throw bearerError('invalid_token', ACCESS_TOKEN_REJECTION_MESSAGES[checked.reason]);
  const { user, scope } = checked.token;
  if (user === undefined) throw bearerError('invalid_token', 'the token does not belong to a user');
  if (!scope.includes('openid'))
    throw bearerError('insufficient_scope', 'the token was not granted the openid scope');
  return { sub: user.id, ...userClaims(user, scope) };
}
