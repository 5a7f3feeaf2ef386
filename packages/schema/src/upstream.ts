import * as z from 'zod/mini';
import { checked } from './checked.js';

// What idgate's connectors read from GitHub's and GitLab's APIs: only the fields they use, so a
// field the upstream adds or drops elsewhere never breaks a sign-in. Unknown fields are stripped.

/** A numeric account id as both APIs send it: the stable subject, as logins can be renamed. */
const AccountId = /* @__PURE__ */ checked(/* @__PURE__ */ z.int(), /* @__PURE__ */ z.positive());
const Name = /* @__PURE__ */ checked(/* @__PURE__ */ z.string(), /* @__PURE__ */ z.minLength(1));

/**
 * An OAuth access token response (RFC 6749 §5.1) as GitHub's and GitLab's token endpoints send
 * it; the connector checks the token type itself.
 * @example UpstreamTokenResponse.parse({ access_token: 'gho_x', token_type: 'bearer', scope: 'read:user' })
 */
export const UpstreamTokenResponse = /* @__PURE__ */ z.object({
  access_token: Name,
  token_type: Name,
});
export type UpstreamTokenResponse = z.infer<typeof UpstreamTokenResponse>;

/**
 * GitHub's `GET /user`: the signed-in account.
 * @example GitHubUser.parse({ id: 1, login: 'octocat', name: 'monalisa octocat' })
 */
export const GitHubUser = /* @__PURE__ */ z.object({
  id: AccountId,
  login: Name,
  name: /* @__PURE__ */ z.nullish(/* @__PURE__ */ z.string()),
});
export type GitHubUser = z.infer<typeof GitHubUser>;

/**
 * One page of GitHub's `GET /user/emails`.
 * @example GitHubEmails.parse([{ email: 'octocat@github.com', primary: true, verified: true, visibility: 'public' }])
 */
export const GitHubEmails = /* @__PURE__ */ z.array(
  /* @__PURE__ */ z.object({
    email: Name,
    primary: /* @__PURE__ */ z.boolean(),
    verified: /* @__PURE__ */ z.boolean(),
  }),
);
export type GitHubEmails = z.infer<typeof GitHubEmails>;

/**
 * One page of GitHub's `GET /user/orgs`.
 * @example GitHubOrganizations.parse([{ login: 'github', id: 1 }])
 */
export const GitHubOrganizations = /* @__PURE__ */ z.array(/* @__PURE__ */ z.object({ login: Name }));
export type GitHubOrganizations = z.infer<typeof GitHubOrganizations>;

/**
 * One page of GitHub's `GET /user/teams`: each team with the organization it belongs to.
 * @example GitHubTeams.parse([{ slug: 'justice-league', organization: { login: 'github' } }])
 */
export const GitHubTeams = /* @__PURE__ */ z.array(
  /* @__PURE__ */ z.object({
    slug: Name,
    organization: /* @__PURE__ */ z.object({ login: Name }),
  }),
);
export type GitHubTeams = z.infer<typeof GitHubTeams>;

/**
 * GitLab's `GET /api/v4/user`. `email` is the primary address; `confirmed_at` is null until the
 * account's address is confirmed.
 * @example GitLabUser.parse({ id: 1, username: 'john_smith', name: 'John Smith', email: 'john@example.com', confirmed_at: '2012-05-23T09:05:22Z' })
 */
export const GitLabUser = /* @__PURE__ */ z.object({
  id: AccountId,
  username: Name,
  name: /* @__PURE__ */ z.nullish(/* @__PURE__ */ z.string()),
  email: /* @__PURE__ */ z.nullish(/* @__PURE__ */ z.string()),
  confirmed_at: /* @__PURE__ */ z.nullish(/* @__PURE__ */ z.string()),
});
export type GitLabUser = z.infer<typeof GitLabUser>;

/**
 * GitLab's `GET /oauth/userinfo`: `groups` holds the full path of every group the user is a
 * member of, directly or through an ancestor group.
 * @example GitLabUserinfo.parse({ sub: '1', groups: ['acme', 'acme/platform'] })
 */
export const GitLabUserinfo = /* @__PURE__ */ z.object({
  groups: /* @__PURE__ */ z.nullish(/* @__PURE__ */ z.array(Name)),
});
export type GitLabUserinfo = z.infer<typeof GitLabUserinfo>;

/** Any schema of this module, for code that reads an upstream answer through one of them. */
export type UpstreamSchema<T> = z.ZodMiniType<T>;
