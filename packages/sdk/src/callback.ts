import { IdentityProviderName, TokenResponse } from '@idgate/schema';
import { IdgateSdkError } from './errors.js';
import { send, type TransportOptions } from './http.js';

/** Callback parameters that are credentials: redacted from every error message. */
const CALLBACK_SECRETS = ['code', 'access_token'] as const;

/**
 * `GET /oauth/callback/{provider}?…` with the query an external identity provider redirected
 * back with, forwarded as is (see {@link IdgateClient.callback}); `apiKey` is never sent, only
 * redacted from errors like the credentials of the query.
 */
export async function finishExternalSignIn(
  transport: TransportOptions,
  apiKey: string | undefined,
  provider: string,
  query: Record<string, string> | URLSearchParams,
): Promise<TokenResponse> {
  const endpoint = 'GET /oauth/callback/{provider}';
  if (typeof provider !== 'string' || !IdentityProviderName.safeParse(provider).success) {
    throw new IdgateSdkError(
      'provider must be an identity provider name: lower-case letters, digits and -, starting with a letter',
      { endpoint },
    );
  }
  let params: URLSearchParams;
  try {
    params = new URLSearchParams(query);
  } catch (error) {
    throw new IdgateSdkError('query must be a record of strings or URLSearchParams', {
      endpoint,
      cause: error,
    });
  }
  const search = params.toString();
  const secrets = CALLBACK_SECRETS.flatMap((name) => params.getAll(name));
  return send(transport, {
    method: 'GET',
    path: `oauth/callback/${provider}${search === '' ? '' : `?${search}`}`,
    schema: TokenResponse,
    schemaName: 'TokenResponse',
    secrets: [apiKey, ...secrets],
    retry: 0,
    redirectHint:
      'the sign-in continues an authorization request in a browser (see error.location), so it answers no tokens',
  });
}
