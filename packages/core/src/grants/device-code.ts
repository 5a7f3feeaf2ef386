import type { DeviceCodeGrantRequest, TokenResponse } from '@idgate/schema';
import { OAuthProtocolError } from '../errors.js';
import type { ClientRecord } from '../model.js';
import { grantResources, tokenAudienceWithin } from '../scopes.js';
import { hashSecret } from '../secrets.js';
import { madeBefore } from '../tokens/access-token-check.js';
import type { TokenEndpointContext } from './context.js';
import { grantStep } from './step.js';
import { grantsRefreshToken, issueUserTokens, openGrant } from './user-tokens.js';

/** RFC 8628 §3.5: a device that polls too fast waits 5 s longer from then on. */
export const SLOW_DOWN_INCREMENT_SECONDS = 5;

const invalid = (description: string) => new OAuthProtocolError('invalid_grant', description);

/**
 * Device access token request (RFC 8628 §3.4–3.5): `authorization_pending` until the person
 * decides, `slow_down` (and 5 s more from then on) for a poll sooner than the interval,
 * `access_denied` after a denial, `expired_token` after the code's lifetime; an unknown, used or
 * another client's code is `invalid_grant`. Once approved, the code is consumed atomically (a
 * second poll is `invalid_grant`) and the tokens come as from any user grant: a refresh token
 * when `offline_access` was granted and the client has the refresh_token grant, `aud` from the
 * requested resource. The grant covers every resource the person approved on the page, and its
 * refreshes may ask for those only (RFC 8707 §2.2).
 * @example const tokens = await deviceCodeGrant(request, client, context);
 */
export async function deviceCodeGrant(
  request: DeviceCodeGrantRequest,
  client: ClientRecord,
  context: TokenEndpointContext,
): Promise<TokenResponse> {
  const { storage, clock } = context;
  const hash = await hashSecret(request.device_code);
  const now = clock.now();
  // One statement for the usual poll: it records the poll, does the slow_down check and reads the
  // request. Another client's code is not found, so it cannot slow this one's device down.
  const polled = await storage.deviceAuthorizations.poll(
    hash,
    client.clientId,
    new Date(now),
    SLOW_DOWN_INCREMENT_SECONDS,
  );
  if (polled === undefined) throw invalid('the device code is not valid');
  const found = polled.record;
  if (found.status === 'consumed') throw invalid('the device code was already used');
  if (found.expiresAt.getTime() <= now) {
    throw new OAuthProtocolError('expired_token', 'the device code has expired: start again');
  }
  if (found.status === 'denied') {
    // RFC 8628 §3.5: a token endpoint error (RFC 6749 §5.2), so 400 like the other polling answers.
    throw new OAuthProtocolError('access_denied', 'the user denied the request', { status: 400 });
  }
  if (
    found.status === 'approved' &&
    found.userId !== null &&
    madeBefore(found.createdAt, await context.notBefore?.(found.clientId, found.userId))
  )
    throw invalid('the device code was revoked (issued before a not-before)');
  if (found.status === 'pending') {
    if (polled.slowDown) {
      // RFC 8628 §3.5 answers with RFC 6749 §5.2 errors: 400, not 429.
      throw new OAuthProtocolError('slow_down', `poll at most every ${found.interval} seconds`, {
        status: 400,
      });
    }
    throw new OAuthProtocolError('authorization_pending', 'the user has not decided yet');
  }

  // RFC 8707 §2.2: the poll may ask for some of the resources the person approved on the page,
  // never another; the grant covers all of them.
  const covered = grantResources(found.resource, client);
  const asked = request.resource === undefined ? [] : [request.resource].flat().filter((r) => r !== '');
  const outside = asked.filter((value) => !covered.includes(value));
  if (outside.length > 0) {
    throw new OAuthProtocolError(
      'invalid_target',
      `resource was not part of the device authorization: ${outside.join(' ')}`,
    );
  }
  const audience = tokenAudienceWithin(asked, covered, client);
  // The redemption is one transaction: the claim, the grant, the refresh token and the events.
  return grantStep(context, client, async (step) => {
    const claim = await step.storage.deviceAuthorizations.consume(hash, new Date(now));
    if (claim === undefined || !claim.won) throw invalid('the device code was already used');
    const approved = claim.record;
    if (approved.userId === null || approved.authTime === null) throw invalid('the device code is not valid');
    const user = await step.storage.users.findById(approved.userId);
    if (user === undefined || user.disabled) throw invalid('the account is not active');

    const grant = await openGrant(step, {
      userId: user.id,
      clientId: client.clientId,
      scope: approved.scope,
      authTime: approved.authTime,
      sessionId: approved.sessionId,
      upstream: approved.upstream ?? null,
      amr: approved.amr ?? null,
      resources: covered,
    });
    return issueUserTokens(step, {
      grant,
      client,
      user,
      scope: approved.scope,
      grantType: 'urn:ietf:params:oauth:grant-type:device_code',
      audience,
      ...(grantsRefreshToken(client, approved.scope, context) ? { refreshScope: approved.scope } : {}),
    });
  });
}
