import { type GitLabProviderConfig, GitLabUser, GitLabUserinfo } from '@idgate/schema';
import { oauthAppConnector } from './oauth-app.js';
import {
  ConnectorError,
  type ConnectorFailure,
  type ExternalIdentity,
  type RedirectConnector,
} from './types.js';
import { Upstream, type UpstreamOptions } from './upstream.js';

/** How the GitLab connector reaches GitLab. */
export type GitLabConnectorOptions = UpstreamOptions;

/**
 * `read_user` for `/api/v4/user`, `openid` for the `groups` of `/oauth/userinfo`, `email` for the
 * primary address. Not `read_api`: listing `/api/v4/groups` would need it, and it reads every
 * project the user can see.
 */
const SCOPE = 'read_user openid email';

/**
 * A GitLab (gitlab.com or self-managed) OAuth application, with PKCE. The identity comes from
 * `/api/v4/user` (the numeric id is the subject; the `email` counts as verified when the account
 * is confirmed), the groups are the full paths in the `groups` of `/oauth/userinfo` (direct
 * memberships and those inherited from an ancestor group). GitLab's ID token is not verified: the
 * API, called with the access token, is the source. With `allowedGroups`, only members of one of
 * them or of a subgroup of one get an identity.
 * @example
 * const gitlab = createGitLabConnector(GitLabProviderConfig.parse({ type: 'gitlab', name: 'gitlab', clientId, clientSecret }));
 * const url = await gitlab.authorizationUrl({ redirectUri, state, nonce, codeChallenge });
 * const identity = await gitlab.exchangeCode({ code, redirectUri, codeVerifier, nonce });
 */
export function createGitLabConnector(
  config: GitLabProviderConfig,
  options: GitLabConnectorOptions = {},
): RedirectConnector {
  const gitlab = new Upstream('GitLab', options, [config.clientSecret]);
  const baseUrl = config.baseUrl.replace(/\/+$/, '');
  const allowed = config.allowedGroups.map((group) => group.replace(/^\/+|\/+$/g, '').toLowerCase());

  const isAllowed = (groups: string[]) =>
    groups.some((group) => {
      const path = group.toLowerCase();
      return allowed.some((root) => path === root || path.startsWith(`${root}/`));
    });

  async function loadIdentity(accessToken: string, refused: ConnectorFailure): Promise<ExternalIdentity> {
    const headers = { accept: 'application/json' };
    const [userAnswer, userinfoAnswer] = await Promise.all([
      gitlab.get(new URL(`${baseUrl}/api/v4/user`), accessToken, refused, headers),
      gitlab.get(new URL(`${baseUrl}/oauth/userinfo`), accessToken, refused, headers),
    ]);
    const user = await gitlab.read(userAnswer, 'user', GitLabUser, [accessToken]);
    const userinfo = await gitlab.read(userinfoAnswer, 'userinfo', GitLabUserinfo, [accessToken]);
    const groups = [...new Set(userinfo.groups ?? [])];
    if (allowed.length > 0 && !isAllowed(groups)) {
      throw new ConnectorError(
        'not_allowed',
        'Your GitLab account is not in a group allowed to sign in here',
      );
    }
    const email = user.email || null;
    return {
      subject: String(user.id),
      username: user.username,
      email,
      emailVerified: email !== null && Boolean(user.confirmed_at),
      displayName: user.name || null,
      groups,
    };
  }

  return oauthAppConnector(gitlab, {
    clientId: config.clientId,
    clientSecret: config.clientSecret,
    scope: SCOPE,
    authorizationEndpoint: `${baseUrl}/oauth/authorize`,
    authorizationParameters: { response_type: 'code' },
    tokenEndpoint: `${baseUrl}/oauth/token`,
    tokenParameters: { grant_type: 'authorization_code' },
    loadIdentity,
  });
}
