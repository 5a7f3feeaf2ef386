import type { PasswordGrantRequest, TokenResponse } from '@idgate/schema';
import { OAuthProtocolError } from '../errors.js';
import type { ClientRecord } from '../model.js';
import { grantedScope, parseScope, tokenAudience } from '../scopes.js';
import { verifyUserPassword } from '../users/authenticate.js';
import type { ExternalPasswordCheck, TokenEndpointContext } from './context.js';
import { grantsRefreshToken, issueUserTokens, openGrant } from './user-tokens.js';

/**
 * Resource owner password credentials (RFC 6749 §4.3), for trusted clients only (RFC 9700 §2.4
 * advises against it for anyone else). Failed attempts count toward the account lock; a locked
 * account is answered 429 with Retry-After before the password is even checked.
 * @example const tokens = await passwordGrant(request, client, context);
 */
export async function passwordGrant(
  request: PasswordGrantRequest,
  client: ClientRecord,
  context: TokenEndpointContext,
): Promise<TokenResponse> {
  if (!client.trusted)
    throw new OAuthProtocolError(
      'unauthorized_client',
      'the password grant is allowed only for trusted clients',
    );
  const scope = grantedScope(parseScope(request.scope), client.scopes);
  tokenAudience(request.resource, client);

  let check: ExternalPasswordCheck = (username, password) =>
    verifyUserPassword(username, password, context.passwords);
  if (request.provider !== undefined) {
    const external = await context.externalPasswords?.(request.provider.toLowerCase());
    if (external === undefined)
      throw new OAuthProtocolError('invalid_request', `there is no password provider ${request.provider}`);
    check = external;
  }
  const attempt = {
    username: request.username,
    sourceAddress: context.sourceAddress ?? 'unknown',
    provider: request.provider?.toLowerCase() ?? 'password',
  };
  // The caller is the client's server, not the user's browser: only the account is throttled.
  const decision = await context.throttle?.check(request.username);
  if (decision?.locked) {
    await context.throttle?.record({ ...attempt, userId: null, success: false, reason: 'locked' });
    throw new OAuthProtocolError('invalid_grant', 'too many failed sign-ins: the account is locked for now', {
      status: 429,
      headers: { 'Retry-After': String(decision.retryAfterSeconds) },
    });
  }
  const login = await check(request.username, request.password);
  if (!login.ok) {
    await context.throttle?.record({ ...attempt, userId: null, success: false, reason: login.failure });
    const messages = {
      disabled: 'the account is disabled',
      not_linked: 'no account is linked to this identity',
      invalid_credentials: 'invalid username or password',
    };
    throw new OAuthProtocolError('invalid_grant', messages[login.failure]);
  }
  const { user } = login;
  await context.throttle?.record({ ...attempt, userId: user.id, success: true, reason: null });
  const grant = await openGrant(context, {
    userId: user.id,
    clientId: client.clientId,
    scope,
    authTime: new Date(context.clock.now()),
    sessionId: null,
  });
  return issueUserTokens(context, {
    grant,
    client,
    user,
    scope,
    ...(request.resource === undefined ? {} : { resource: request.resource }),
    ...(grantsRefreshToken(client, scope, context) ? { refreshScope: scope } : {}),
  });
}
