import type { AuthorizationCodeGrantRequest, TokenResponse } from '@idgate/schema';
import { authorizationCodeId } from '../authorize/flow.js';
import { verifyCodeVerifier } from '../authorize/pkce.js';
import { OAuthProtocolError } from '../errors.js';
import type { ClientRecord } from '../model.js';
import { grantResources, tokenAudienceWithin } from '../scopes.js';
import { hashSecret } from '../secrets.js';
import { madeBefore } from '../tokens/access-token-check.js';
import { requestOrigin, type TokenEndpointContext } from './context.js';
import { revokeReplayedGrant } from './replay.js';
import { grantStep } from './step.js';
import { grantsRefreshToken, issueUserTokens, openGrant } from './user-tokens.js';

const invalid = (description: string) => new OAuthProtocolError('invalid_grant', description);

/**
 * Authorization code grant (RFC 6749 §4.1.3): the code is single use — a replay fails and revokes
 * what the first redemption produced (§4.1.2) — bound to its client and redirect_uri, and checked
 * against the PKCE challenge (RFC 7636 §4.6). A verifier without a challenge is refused too, so
 * PKCE cannot be downgraded (RFC 9700 §2.1.1). The whole exchange — the claim, the grant, the
 * refresh token and the audit events — is one transaction.
 * @example const tokens = await authorizationCodeGrant(request, client, context);
 */
export async function authorizationCodeGrant(
  request: AuthorizationCodeGrantRequest,
  client: ClientRecord,
  context: TokenEndpointContext,
): Promise<TokenResponse> {
  const hash = await hashSecret(request.code);
  // One transaction: a replay that comes while this exchange is under way waits for it, and then
  // finds (and revokes) the grant it produced.
  return grantStep(context, client, (step) => exchangeCode(request, client, hash, step));
}

async function exchangeCode(
  request: AuthorizationCodeGrantRequest,
  client: ClientRecord,
  hash: string,
  context: TokenEndpointContext,
): Promise<TokenResponse> {
  const { storage, clock } = context;
  const redemption = await storage.authorizationCodes.redeem(hash, new Date(clock.now()));
  if (redemption.status === 'unknown') throw invalid('the authorization code is not valid');
  const { code } = redemption;
  if (redemption.status === 'replayed') {
    await revokeReplayedGrant(context, {
      type: 'code.replayed',
      codeId: await authorizationCodeId(hash),
      grantId: code.grantId,
      subject: code.userId,
      clientId: code.clientId,
      presentedBy: client.clientId,
    });
    throw invalid('the authorization code was already used');
  }
  if (code.clientId !== client.clientId) throw invalid('the authorization code was issued to another client');
  if (code.expiresAt.getTime() <= clock.now()) throw invalid('the authorization code has expired');
  if (request.redirect_uri !== code.redirectUri)
    throw invalid('redirect_uri does not match the authorization request');
  if (code.codeChallenge !== null && code.codeChallengeMethod !== null) {
    if (request.code_verifier === undefined) throw invalid('code_verifier is required');
    if (!(await verifyCodeVerifier(request.code_verifier, code.codeChallenge, code.codeChallengeMethod))) {
      throw invalid('code_verifier does not match the code_challenge');
    }
  } else if (request.code_verifier !== undefined) {
    throw invalid('code_verifier was sent but the authorization request had no code_challenge');
  }
  // The grant covers what the person approved: the authorization request's resources (the
  // client's audiences when it named none); the token may be for some of them (RFC 8707 §2.2).
  const covered = grantResources(code.resource, client);
  const audience = tokenAudienceWithin(codeResource(request.resource, code.resource), covered, client);
  const user = await storage.users.findById(code.userId);
  if (user === undefined || user.disabled) throw invalid('the account is not active');
  if (madeBefore(code.createdAt, await context.notBefore?.(code.clientId, code.userId)))
    throw invalid('the authorization code was revoked (issued before a not-before)');

  // The grant and the code's pointer to it land together: a replay can always revoke it.
  const grant = await openGrant(
    context,
    {
      userId: user.id,
      clientId: client.clientId,
      scope: code.scope,
      authTime: code.authTime,
      sessionId: code.sessionId,
      // As the sign-in recorded it, so a refresh re-checks the identity upstream when due.
      upstream: code.upstream ?? null,
      amr: code.amr ?? null,
      resources: covered,
    },
    (record) => storage.authorizationCodes.openGrant(hash, record),
  );
  return issueUserTokens(context, {
    grant,
    client,
    user,
    scope: code.scope,
    nonce: code.nonce,
    grantType: 'authorization_code',
    events: [
      {
        type: 'code.redeemed',
        actor: { kind: 'client', id: client.clientId },
        subject: user.id,
        clientId: client.clientId,
        ...requestOrigin(context),
        details: { codeId: await authorizationCodeId(hash), grantId: grant.id },
      },
    ],
    audience,
    ...(grantsRefreshToken(client, code.scope, context) ? { refreshScope: code.scope } : {}),
  });
}

/**
 * RFC 8707 §2.2: the resources the token request names, each of which the authorization request
 * named when it named any (a code from before idgate recorded them names none: then each must be
 * among the client's audiences, which issuing checks); none when it names none.
 */
function codeResource(
  requested: string | string[] | undefined,
  authorized: string[] | null,
): string[] | undefined {
  const asked =
    requested === undefined
      ? []
      : (Array.isArray(requested) ? requested : [requested]).filter((r) => r !== '');
  if (asked.length === 0) return undefined;
  if (authorized !== null) {
    const beyond = asked.filter((value) => !authorized.includes(value));
    if (beyond.length > 0)
      throw new OAuthProtocolError(
        'invalid_target',
        `resource was not part of the authorization request: ${beyond.join(' ')}`,
      );
  }
  return asked;
}
