import type {
  TokenReviewRequest,
  TokenReviewResponse,
  TokenReviewStatus,
  TokenReviewUser,
} from '@idgate/schema';
import type { KeyRing } from '../keys/key-ring.js';
import type { ClientRecord, RevocationKind, UserRecord } from '../model.js';
import type { Clock } from '../ports/runtime.js';
import { ACCESS_TOKEN_REJECTION_MESSAGES, verifyAccessToken } from '../tokens/access-token.js';

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
export interface TokenReviewContext {
  issuer: string;
  keys: KeyRing;
  clock: Clock;
  findUser(id: string): Promise<UserRecord | undefined>;
  findClient(clientId: string): Promise<ClientRecord | undefined>;
  isRevoked(kind: RevocationKind, value: string): Promise<boolean>;
}

function denied(error: string): TokenReviewStatus {
  return { authenticated: false, error };
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
 * @example
 * const review = await reviewToken({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } }, context);
 */
export async function reviewToken(
  request: TokenReviewRequest,
  context: TokenReviewContext,
): Promise<TokenReviewResponse> {
  return {
    apiVersion: request.apiVersion,
    kind: 'TokenReview',
    status: await decide(request.spec.token, request.spec.audiences, context),
  };
}

async function decide(
  token: string | undefined,
  requestedAudiences: readonly string[] | undefined,
  context: TokenReviewContext,
): Promise<TokenReviewStatus> {
  if (token === undefined || token.trim() === '') return denied('token is missing');
  const verified = await verifyAccessToken(context.keys, context.issuer, token.trim(), context.clock);
  if (!verified.ok) return denied(ACCESS_TOKEN_REJECTION_MESSAGES[verified.reason]);
  const { claims, scope } = verified;

  if (await context.isRevoked('jti', claims.jti)) return denied('token has been revoked');
  if (claims.sid !== undefined && (await context.isRevoked('sid', claims.sid)))
    return denied('token has been revoked');

  let audiences: string[] | undefined;
  if (requestedAudiences !== undefined && requestedAudiences.length > 0) {
    const audienceAware = verified.audience.some((aud) => aud !== claims.client_id);
    const shared = requestedAudiences.filter((aud) => verified.audience.includes(aud));
    if (shared.length > 0) audiences = [...new Set(shared)];
    else if (audienceAware) return denied('token audience does not match');
  }

  const extra: Record<string, string[]> = { [TOKEN_REVIEW_EXTRA.clientId]: [claims.client_id] };
  if (scope.length > 0) extra[TOKEN_REVIEW_EXTRA.scopes] = scope;
  if (claims.sid !== undefined) extra[TOKEN_REVIEW_EXTRA.grantId] = [claims.sid];

  // Removing a client ends every token it was issued.
  const client = await context.findClient(claims.client_id);
  if (client === undefined) return denied('client no longer exists');

  let user: TokenReviewUser;
  if (claims.sub === claims.client_id) {
    const name = `${SERVICE_IDENTITY.prefix}${client.clientId}`;
    user = { username: name, uid: name, groups: [SERVICE_IDENTITY.group], extra };
  } else {
    const record = await context.findUser(claims.sub);
    if (record === undefined) return denied('user no longer exists');
    if (record.disabled) return denied('user is disabled');
    user = { username: record.username, uid: record.id, groups: [...new Set(record.groups)].sort(), extra };
  }
  return audiences === undefined ? { authenticated: true, user } : { authenticated: true, user, audiences };
}
