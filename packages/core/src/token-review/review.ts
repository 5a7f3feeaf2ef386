import type {
  TokenReviewRequest,
  TokenReviewResponse,
  TokenReviewStatus,
  TokenReviewUser,
} from '@idgate/schema';
import { ACR } from '../factors/assurance.js';
import { ACCESS_TOKEN_REJECTION_MESSAGES, type LiveTokenRejection } from '../tokens/access-token.js';
import { checkAccessToken, type LiveTokenContext } from '../tokens/access-token-check.js';

/** Keys of `status.user.extra`, prefixed with a domain as Kubernetes asks of extra keys. */
export const TOKEN_REVIEW_EXTRA = {
  clientId: 'idgate.dev/client-id',
  scopes: 'idgate.dev/scopes',
  grantId: 'idgate.dev/grant-id',
} as const;

/**
 * A client that obtained a token for itself (client_credentials) is reviewed as this service
 * identity: username and uid `client:<client_id>` (a colon never occurs in a username, so it
 * cannot collide with a user), and the group `idgate:clients`.
 */
export const SERVICE_IDENTITY = {
  prefix: 'client:',
  group: 'idgate:clients',
} as const;

/** What a token review reads: the keys, and lookups that may be served from memory. */
export type TokenReviewContext = LiveTokenContext & {
  /**
   * Whether the cluster `name` requires a second factor (its tokens need the MFA `acr`). Omitted:
   * none does.
   */
  clusterRequiresMfa?(name: string): Promise<boolean>;
};

/** Why a TokenReview did not authenticate: no token, a token that is not live, or one for other audiences. */
export type TokenReviewDenial =
  | 'missing'
  | LiveTokenRejection
  | 'audience_mismatch'
  | 'cluster_mismatch'
  | 'mfa_required';

/**
 * The `status.error` of each {@link TokenReviewDenial}: what Kubernetes logs, and what a metric
 * can read the denial back from.
 * @example TOKEN_REVIEW_DENIAL_MESSAGES.expired // 'token has expired'
 */
export const TOKEN_REVIEW_DENIAL_MESSAGES: Readonly<Record<TokenReviewDenial, string>> = {
  missing: 'token is missing',
  ...ACCESS_TOKEN_REJECTION_MESSAGES,
  audience_mismatch: 'token audience does not match',
  cluster_mismatch: 'token is not for this cluster',
  mfa_required: `this cluster requires a sign-in with a second factor (acr ${ACR.mfa}) and the token's had none: sign in again`,
};

/** Who asks for a review: an API key bound to a cluster answers only for that cluster. */
export interface TokenReviewer {
  cluster: { name: string; audience: string } | null;
}

function denied(denial: TokenReviewDenial): TokenReviewStatus {
  return { authenticated: false, error: TOKEN_REVIEW_DENIAL_MESSAGES[denial] };
}

/**
 * Decides a TokenReview as a Kubernetes webhook token authenticator: only a valid, unexpired,
 * unrevoked idgate access token of an active user (or of an existing client acting for itself)
 * authenticates. A token that does not is never an exception: the answer is
 * `authenticated: false` with a short `status.error`.
 *
 * Audiences: when `spec.audiences` is set and the token was minted for resource audiences, the
 * token must share at least one with the request and `status.audiences` is that intersection.
 * A token whose only audience is its own client is not audience-aware: it authenticates with no
 * `status.audiences`, which Kubernetes reads as "valid for the API server's own audiences".
 *
 * A `reviewer` bound to a cluster (its API key's) authenticates only tokens whose `aud` includes
 * that cluster's audience — and, when the cluster requires a second factor, whose `acr` is the MFA
 * one — and answers `status.audiences: [that audience]` (left out when the
 * request names other audiences only: the API server's own, which the binding vouches for).
 * @example
 * const review = await reviewToken({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } }, context);
 */
export async function reviewToken(
  request: TokenReviewRequest,
  context: TokenReviewContext,
  reviewer?: TokenReviewer,
): Promise<TokenReviewResponse> {
  return {
    apiVersion: request.apiVersion,
    kind: 'TokenReview',
    status: await decide(request.spec.token, request.spec.audiences, context, reviewer?.cluster ?? null),
  };
}

async function decide(
  token: string | undefined,
  requestedAudiences: readonly string[] | undefined,
  context: TokenReviewContext,
  cluster: TokenReviewer['cluster'],
): Promise<TokenReviewStatus> {
  if (token === undefined || token.trim() === '') return denied('missing');
  const checked = await checkAccessToken(token.trim(), context);
  if (!checked.ok) return denied(checked.reason);
  const { claims, scope, audience, client, user, workload } = checked.token;

  let audiences: string[] | undefined;
  if (cluster !== null) {
    // A key bound to a cluster speaks for that cluster only, as Kubernetes' own JWT authenticator
    // does: the token must have been minted for its audience, whatever the request says.
    // The API server sends its own audiences (`--api-audiences`), which need not name idgate's:
    // then the answer leaves `status.audiences` out, which it reads as "valid for mine" — the
    // key's binding is what vouches for that.
    if (!audience.includes(cluster.audience)) return denied('cluster_mismatch');
    // A cluster that requires a second factor: only a token of a sign-in that had one (its `acr`).
    if (claims.acr !== ACR.mfa && (await context.clusterRequiresMfa?.(cluster.name)) === true)
      return denied('mfa_required');
    const asked = requestedAudiences ?? [];
    if (asked.length === 0 || asked.includes(cluster.audience)) audiences = [cluster.audience];
  } else if (requestedAudiences !== undefined && requestedAudiences.length > 0) {
    const audienceAware = audience.some((aud) => aud !== claims.client_id);
    const shared = requestedAudiences.filter((aud) => audience.includes(aud));
    if (shared.length > 0) audiences = [...new Set(shared)];
    else if (audienceAware) return denied('audience_mismatch');
  }

  const extra: Record<string, string[]> = { [TOKEN_REVIEW_EXTRA.clientId]: [claims.client_id] };
  if (scope.length > 0) extra[TOKEN_REVIEW_EXTRA.scopes] = scope;
  if (claims.sid !== undefined) extra[TOKEN_REVIEW_EXTRA.grantId] = [claims.sid];

  let reviewed: TokenReviewUser;
  if (workload !== undefined) {
    reviewed = {
      username: workload.username,
      uid: claims.sub,
      groups: [...new Set(workload.groups)].sort(),
      extra,
    };
  } else if (user === undefined || client === undefined) {
    const name = `${SERVICE_IDENTITY.prefix}${claims.client_id}`;
    reviewed = { username: name, uid: name, groups: [SERVICE_IDENTITY.group], extra };
  } else {
    reviewed = { username: user.username, uid: user.id, groups: [...new Set(user.groups)].sort(), extra };
  }
  return audiences === undefined
    ? { authenticated: true, user: reviewed }
    : { authenticated: true, user: reviewed, audiences };
}
