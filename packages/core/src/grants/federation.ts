import type { TokenResponse } from '@idgate/schema';
import type { ClientRecord, GrantUpstream, UserRecord } from '../model.js';
import { USER_SCOPES } from '../scopes.js';
import type { TokenEndpointContext } from './context.js';
import { issueSignInTokens } from './user-tokens.js';

/**
 * The token set a federated sign-in answers at `GET /oauth/callback/{callback}` when no
 * authorization request is waiting: a new grant of `user` to the provider's token client, with
 * every user scope the client may have, and a refresh token when that includes `offline_access`.
 * `user` is the signed-in user; the ID token describes them as tokens do (identity groups
 * included), read through `context.storage.users`. `upstream` (see `grantUpstream`) lets the
 * grant's refreshes re-check the identity at the provider; `amr` (see `upstreamAmr`) is the
 * sign-in's, which the grant's tokens carry with its `acr`.
 * @example const tokens = await issueFederatedTokens(user, tokenClient, context, upstream);
 */
export async function issueFederatedTokens(
  user: UserRecord,
  client: ClientRecord,
  context: TokenEndpointContext,
  upstream?: GrantUpstream,
  amr: string[] | null = null,
): Promise<TokenResponse> {
  const described = (await context.storage.users.findById(user.id)) ?? user;
  const scope = USER_SCOPES.filter((s) => client.scopes.includes(s));
  return issueSignInTokens(context, {
    user: described,
    client,
    scope: [...scope],
    upstream,
    ...(amr === null ? {} : { amr }),
    grantType: 'federation',
  });
}
