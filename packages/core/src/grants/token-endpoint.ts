import {
  DEVICE_CODE_GRANT_TYPE,
  type FormValues,
  type GrantType,
  TOKEN_EXCHANGE_GRANT_TYPE,
  type TokenResponse,
} from '@idgate/schema';
import { authenticateClient, type PresentedClientCredentials } from '../clients/authenticate.js';
import { OAuthProtocolError } from '../errors.js';
import type { Caller } from '../ports/caller.js';
import { authorizationCodeGrant } from './authorization-code.js';
import { clientCredentialsGrant } from './client-credentials.js';
import type { TokenEndpointContext } from './context.js';
import { deviceCodeGrant } from './device-code.js';
import { parseTokenRequest } from './parse.js';
import { passwordGrant } from './password.js';
import { refreshTokenGrant } from './refresh-token.js';
import { tokenExchangeGrant } from './token-exchange.js';

/** The grant types this version of the token endpoint serves. */
export const TOKEN_ENDPOINT_GRANT_TYPES: readonly GrantType[] = [
  'authorization_code',
  'refresh_token',
  'client_credentials',
  'password',
  DEVICE_CODE_GRANT_TYPE,
  TOKEN_EXCHANGE_GRANT_TYPE,
];

/**
 * The token endpoint (RFC 6749 §3.2): parse the form, authenticate the client, check the client
 * may use the grant, run the grant. Every refusal is an {@link OAuthProtocolError} in RFC 6749 §5.2 form.
 * `caller` is who asks, this time (its address and log stand in for the context's).
 * The token exchange (RFC 8693 §2.1 leaves client authentication to the server's policy) needs
 * none: the subject token is the credential. A client that does authenticate is checked as for
 * any grant, and must be allowed the grant type.
 * @example const tokens = await handleTokenRequest(form, header, context, { address: request.ip });
 */
export async function handleTokenRequest(
  form: FormValues,
  authorization: string | undefined,
  base: TokenEndpointContext,
  caller?: Caller,
): Promise<TokenResponse> {
  const context =
    caller === undefined ? base : { ...base, sourceAddress: caller.address, origin: caller, log: caller.log };
  const request = parseTokenRequest(form, TOKEN_ENDPOINT_GRANT_TYPES);
  const presented: PresentedClientCredentials = {
    authorization,
    clientId: request.client_id,
    clientSecret: request.client_secret,
  };
  const anonymousExchange =
    request.grant_type === TOKEN_EXCHANGE_GRANT_TYPE &&
    authorization === undefined &&
    request.client_id === undefined &&
    request.client_secret === undefined;
  if (anonymousExchange) return tokenExchangeGrant(request, undefined, context, context.exchange);
  const { client } = await authenticateClient(
    presented,
    (id) => context.findClient(id),
    new Date(context.clock.now()),
  );
  if (!client.grantTypes.includes(request.grant_type)) {
    throw new OAuthProtocolError(
      'unauthorized_client',
      `this client may not use the ${request.grant_type} grant`,
    );
  }
  switch (request.grant_type) {
    case 'password':
      return passwordGrant(request, client, context);
    case 'client_credentials':
      return clientCredentialsGrant(request, client, context);
    case 'authorization_code':
      return authorizationCodeGrant(request, client, context);
    case 'refresh_token':
      return refreshTokenGrant(request, client, context);
    case DEVICE_CODE_GRANT_TYPE:
      return deviceCodeGrant(request, client, context);
    case TOKEN_EXCHANGE_GRANT_TYPE:
      return tokenExchangeGrant(request, client, context, context.exchange);
  }
}
