import type { ClientCredentialsGrantRequest, TokenResponse } from '@idgate/schema';
import { completeAuditEvents } from '../audit/record.js';
import { OAuthProtocolError } from '../errors.js';
import type { ClientRecord } from '../model.js';
import { grantedScope, parseScope, tokenAudience, USER_SCOPES } from '../scopes.js';
import { issueAccessToken } from '../tokens/access-token.js';
import { requestOrigin, type TokenEndpointContext } from './context.js';

// Scopes about an end-user mean nothing when the client acts for itself.
const END_USER_SCOPES: ReadonlySet<string> = new Set(USER_SCOPES);

/**
 * Client credentials (RFC 6749 §4.4): a confidential client gets an access token for itself,
 * `sub` = its client id (RFC 9068 §2.2), no refresh token and no ID token. The token is answered
 * only once its `token.issued` event is stored (through `context.auditBatcher` when there is one):
 * a storage failure fails the issuance.
 * @example const tokens = await clientCredentialsGrant(request, client, context);
 */
export async function clientCredentialsGrant(
  request: ClientCredentialsGrantRequest,
  client: ClientRecord,
  context: TokenEndpointContext,
): Promise<TokenResponse> {
  if (client.public)
    throw new OAuthProtocolError('unauthorized_client', 'public clients cannot use client_credentials');
  const allowed = client.scopes.filter((scope) => !END_USER_SCOPES.has(scope));
  const requested = parseScope(request.scope);
  const userScopes = requested?.filter((scope) => END_USER_SCOPES.has(scope)) ?? [];
  if (userScopes.length > 0) {
    throw new OAuthProtocolError(
      'invalid_scope',
      `scope needs an end-user, which client_credentials has not: ${userScopes.join(' ')}`,
    );
  }
  const scope = grantedScope(requested, allowed);
  const audience = tokenAudience(request.resource, client);
  const access = await issueAccessToken(
    context.keys,
    context.issuer,
    {
      subject: client.clientId,
      clientId: client.clientId,
      audience,
      scope,
      lifetimeSeconds: client.accessTokenTtl,
    },
    context.clock,
    context.random,
  );
  const events = completeAuditEvents(
    [
      {
        type: 'token.issued',
        actor: { kind: 'client', id: client.clientId },
        clientId: client.clientId,
        ...requestOrigin(context),
        details: { grantType: 'client_credentials', scopes: scope, audience, jti: access.jti, grantId: null },
      },
    ],
    context.clock,
    context.auditIds,
  );
  if (context.auditBatcher !== undefined) await context.auditBatcher.append(events);
  else await context.storage.auditEvents.append(events);
  const response: TokenResponse = {
    access_token: access.token,
    token_type: 'Bearer',
    expires_in: access.expiresIn,
  };
  if (scope.length > 0) response.scope = scope.join(' ');
  return response;
}
