import type { PasswordGrantRequest, TokenResponse } from '@idgate/schema';
import { OAuthProtocolError } from '../errors.js';
import { ACR } from '../factors/assurance.js';
import { secondFactorNeed } from '../factors/second-factor.js';
import type { ClientRecord } from '../model.js';
import { grantedScope, parseScope, tokenAudience } from '../scopes.js';
import { signInWithPassword } from '../sign-in/password.js';
import type { TokenEndpointContext } from './context.js';
import { issueSignInTokens } from './user-tokens.js';

/**
 * Resource owner password credentials (RFC 6749 §4.3), for trusted clients only (RFC 9700 §2.4
 * advises against it for anyone else): the password sign-in of the login page
 * ({@link signInWithPassword}), answered as tokens. A locked account is 429 with Retry-After.
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
  // Every sign-in for this client needs a second factor, which this grant cannot ask for.
  if (client.requireMfa === true)
    throw new OAuthProtocolError(
      'invalid_grant',
      `client ${client.clientId} requires a sign-in with a second factor (acr ${ACR.mfa}), which the password grant cannot ask for: use the authorization code or device flow`,
    );
  const scope = grantedScope(parseScope(request.scope), client.scopes);
  tokenAudience(request.resource, client);

  const login = await signInWithPassword(
    {
      username: request.username,
      password: request.password,
      provider: request.provider,
      sourceAddress: context.sourceAddress ?? 'unknown',
      userAgent: context.origin?.userAgent ?? undefined,
      requestId: context.origin?.requestId ?? undefined,
      traceId: context.origin?.traceId ?? undefined,
      clientId: client.clientId,
      log: context.log,
    },
    {
      ...context,
      audit: {
        events: context.storage.auditEvents,
        clock: context.clock,
        ...(context.auditIds === undefined ? {} : { ids: context.auditIds }),
      },
    },
  );
  if (!login.ok) {
    if (login.failure === 'locked') {
      const why = {
        account: 'too many failed sign-ins: the account is locked for now',
        address: 'too many failed sign-ins from this address: try again later',
        client: 'too many failed sign-ins through this client: try again later',
      };
      throw new OAuthProtocolError('invalid_grant', why[login.scope], {
        status: 429,
        headers: { 'Retry-After': String(login.retryAfterSeconds) },
      });
    }
    const messages = {
      disabled: 'the account is disabled',
      not_linked: 'no account is linked to this identity',
      invalid_credentials: 'invalid username or password',
      unknown_provider: `there is no password provider ${request.provider ?? ''}`,
    };
    throw new OAuthProtocolError(
      login.failure === 'unknown_provider' ? 'invalid_request' : 'invalid_grant',
      messages[login.failure],
    );
  }
  // The user's groups as tokens tell them (the grant's storage adds the linked identities').
  const subject = await context.storage.users.findById(login.user.id);
  const need = await secondFactorNeed(login.user.id, context.storage, subject?.groups ?? login.user.groups);
  if (need.groups.length > 0)
    throw new OAuthProtocolError(
      'invalid_grant',
      `group ${need.groups[0]} requires a sign-in with a second factor (acr ${ACR.mfa}), which the password grant cannot ask for: use the authorization code or device flow`,
    );
  if (need.enrolled || need.required)
    throw new OAuthProtocolError(
      'invalid_grant',
      'this account signs in with a second factor, which the password grant cannot ask for: use the authorization code or device flow',
    );
  return issueSignInTokens(context, {
    user: login.user,
    client,
    scope,
    amr: ['pwd'],
    ...(request.resource === undefined ? {} : { resource: request.resource }),
    upstream: login.upstream,
    grantType: 'password',
  });
}
