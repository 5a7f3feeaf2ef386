import type { PasswordGrantRequest, TokenResponse } from '@idgate/schema';
import { IdgateError } from '../errors.js';
import type { ClientRecord } from '../model.js';
import { grantedScope, parseScope, tokenAudience } from '../scopes.js';
import { issueAccessToken } from '../tokens/access-token.js';
import { issueIdToken } from '../tokens/id-token.js';
import { userClaims } from '../tokens/user-claims.js';
import { verifyUserPassword } from '../users/authenticate.js';
import type { TokenEndpointContext } from './context.js';

/**
 * Resource owner password credentials (RFC 6749 §4.3), for trusted clients only (RFC 9700 §2.4
 * advises against it for anyone else). Answers an access token and, with `openid`, an ID token.
 * @example const tokens = await passwordGrant(request, client, context);
 */
export async function passwordGrant(
  request: PasswordGrantRequest,
  client: ClientRecord,
  context: TokenEndpointContext,
): Promise<TokenResponse> {
  if (!client.trusted)
    throw new IdgateError('unauthorized_client', 'the password grant is allowed only for trusted clients');
  const scope = grantedScope(parseScope(request.scope), client.scopes);
  const audience = tokenAudience(request.resource, client);
  const login = await verifyUserPassword(request.username, request.password, context.passwords);
  if (!login.ok) {
    throw new IdgateError(
      'invalid_grant',
      login.failure === 'disabled' ? 'the account is disabled' : 'invalid username or password',
    );
  }
  const { user } = login;
  const authTime = Math.floor(context.clock.now() / 1000);
  const grantId = (context.newGrantId ?? (() => crypto.randomUUID()))();
  const access = await issueAccessToken(
    context.keys,
    context.issuer,
    {
      subject: user.id,
      clientId: client.clientId,
      audience,
      scope,
      grantId,
      authTime,
      lifetimeSeconds: client.accessTokenTtl,
    },
    context.clock,
  );
  const response: TokenResponse = {
    access_token: access.token,
    token_type: 'Bearer',
    expires_in: access.expiresIn,
    scope: scope.join(' '),
  };
  if (scope.includes('openid')) {
    response.id_token = await issueIdToken(
      context.keys,
      context.issuer,
      {
        subject: user.id,
        clientId: client.clientId,
        authTime,
        grantId,
        accessToken: access.token,
        claims: userClaims(user, scope),
        lifetimeSeconds: context.idTokenLifetimeSeconds ?? 3600,
      },
      context.clock,
    );
  }
  return response;
}
