import type { DeviceCodeGrantRequest, TokenResponse } from '@idgate/schema';
import { OAuthProtocolError } from '../errors.js';
import type { ClientRecord } from '../model.js';
import { hashSecret } from '../secrets.js';
import type { TokenEndpointContext } from './context.js';
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
 * requested resource.
 * @example const tokens = await deviceCodeGrant(request, client, context);
 */
export async function deviceCodeGrant(
  request: DeviceCodeGrantRequest,
  client: ClientRecord,
  context: TokenEndpointContext,
): Promise<TokenResponse> {
  const { storage, clock } = context;
  const devices = storage.deviceAuthorizations;
  const hash = await hashSecret(request.device_code);
  const found = await devices.findByDeviceCodeHash(hash);
  if (found === undefined || found.clientId !== client.clientId)
    throw invalid('the device code is not valid');
  if (found.status === 'consumed') throw invalid('the device code was already used');
  const now = clock.now();
  if (found.expiresAt.getTime() <= now) {
    throw new OAuthProtocolError('expired_token', 'the device code has expired: start again');
  }
  if (found.status === 'denied') {
    // RFC 8628 §3.5: a token endpoint error (RFC 6749 §5.2), so 400 like the other polling answers.
    throw new OAuthProtocolError('access_denied', 'the user denied the request', { status: 400 });
  }
  if (found.status === 'pending') {
    const tooSoon = found.lastPolledAt !== null && now - found.lastPolledAt.getTime() < found.interval * 1000;
    const interval = tooSoon ? found.interval + SLOW_DOWN_INCREMENT_SECONDS : found.interval;
    await devices.recordPoll(hash, new Date(now), interval);
    if (tooSoon) {
      // RFC 8628 §3.5 answers with RFC 6749 §5.2 errors: 400, not 429.
      throw new OAuthProtocolError('slow_down', `poll at most every ${interval} seconds`, { status: 400 });
    }
    throw new OAuthProtocolError('authorization_pending', 'the user has not decided yet');
  }

  const resource = request.resource ?? found.resource ?? undefined;
  if (request.resource !== undefined && found.resource !== null) {
    const asked = Array.isArray(request.resource) ? request.resource : [request.resource];
    const outside = asked.filter((value) => !found.resource?.includes(value));
    if (outside.length > 0) {
      throw new OAuthProtocolError(
        'invalid_target',
        `resource was not part of the device authorization: ${outside.join(' ')}`,
      );
    }
  }
  const claim = await devices.consume(hash, new Date(now));
  if (claim === undefined || !claim.won) throw invalid('the device code was already used');
  const approved = claim.record;
  if (approved.userId === null || approved.authTime === null) throw invalid('the device code is not valid');
  const user = await storage.users.findById(approved.userId);
  if (user === undefined || user.disabled) throw invalid('the account is not active');

  const grant = await openGrant(context, {
    userId: user.id,
    clientId: client.clientId,
    scope: approved.scope,
    authTime: approved.authTime,
    sessionId: approved.sessionId,
  });
  return issueUserTokens(context, {
    grant,
    client,
    user,
    scope: approved.scope,
    grantType: 'urn:ietf:params:oauth:grant-type:device_code',
    ...(resource === undefined ? {} : { resource }),
    ...(grantsRefreshToken(client, approved.scope, context) ? { refreshScope: approved.scope } : {}),
  });
}
