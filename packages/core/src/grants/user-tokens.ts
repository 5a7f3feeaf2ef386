import type { TokenResponse } from '@idgate/schema';
import { type AuditEventDraft, recordAuditEvent } from '../audit/record.js';
import { assertMfaFor } from '../clusters/mfa.js';
import { acrOf } from '../factors/assurance.js';
import type { ClientRecord, GrantRecord, GrantUpstream, RefreshTokenRecord, UserRecord } from '../model.js';
import { StorageConflictError } from '../ports/storage.js';
import { tokenAudience } from '../scopes.js';
import { generateSecret, hashSecret } from '../secrets.js';
import { issueAccessToken } from '../tokens/access-token.js';
import { issueIdToken } from '../tokens/id-token.js';
import { clusterClaims, userClaims } from '../tokens/user-claims.js';
import { requestOrigin, type TokenEndpointContext } from './context.js';

/**
 * Whether a grant gets a refresh token: the client must be registered for the refresh_token grant,
 * and the user must have granted `offline_access` (OIDC Core §11) — or the client is trusted and the
 * server is configured to give trusted clients refresh tokens anyway.
 */
export function grantsRefreshToken(
  client: ClientRecord,
  scope: readonly string[],
  context: TokenEndpointContext,
): boolean {
  if (!client.grantTypes.includes('refresh_token')) return false;
  return scope.includes('offline_access') || (client.trusted && context.refreshForTrustedClients === true);
}

/**
 * Opens a grant for a user's sign-in; `store` stores it (default: `storage.grants.create`; the
 * code exchange stores it with the code's pointer to it).
 */
export async function openGrant(
  context: TokenEndpointContext,
  fields: {
    userId: string;
    clientId: string;
    scope: string[];
    authTime: Date;
    sessionId: string | null;
    upstream?: GrantUpstream | null;
    /** How the person signed in (RFC 8176); the grant's tokens carry it, and its `acr`. */
    amr?: string[] | null;
    /** The audiences the sign-in approved (see `grantResources`). */
    resources: string[];
  },
  store: (grant: GrantRecord) => Promise<GrantRecord> = (grant) => context.storage.grants.create(grant),
): Promise<GrantRecord> {
  const now = context.clock.now();
  return store({
    id: (context.newGrantId ?? (() => crypto.randomUUID()))(),
    ...fields,
    createdAt: new Date(now),
    expiresAt: new Date(now + context.lifetimes.grant * 1000),
    revokedAt: null,
    // The opening is the grant's first use: recorded in the same insert.
    lastUsedAt: new Date(now),
    lastUsedAddress: context.sourceAddress ?? null,
  });
}

/** What {@link issueUserTokens} issues from. */
export interface UserTokenRequest {
  grant: GrantRecord;
  client: ClientRecord;
  user: UserRecord;
  /** The scope of this access token (may be narrower than the grant's). */
  scope: string[];
  nonce?: string | null;
  /** The scope a new refresh token carries; omit to issue none. */
  refreshScope?: string[];
  /** The new refresh token itself when it is derived (a rotation with a reuse window); else random. */
  refreshSecret?: string;
  /** The access token's `aud`, already checked against the grant and the client. */
  audience: string[];
  /** The grant type, for the `token.issued` event. */
  grantType?: string;
  /** Events of the same step (`code.redeemed`, `refresh.rotated`), written with the refresh token. */
  events?: AuditEventDraft[];
}

/**
 * Issues the token set of a user grant: an access token (sid = grant id), an ID token when the
 * scope has `openid`, and a refresh token (stored only as its hash) when asked for, expiring at
 * the client's idle lifetime but never after the grant.
 */
export async function issueUserTokens(
  context: TokenEndpointContext,
  request: UserTokenRequest,
): Promise<TokenResponse> {
  const { grant, client, user, scope } = request;
  const authTime = Math.floor(grant.authTime.getTime() / 1000);
  // The grant's own sign-in, never more: a refresh reads the same record (no step-up by refresh).
  const assurance = { acr: acrOf(grant.amr), ...(grant.amr ? { amr: grant.amr } : {}) };
  const { audience } = request;
  // Only a client with audiences of its own can be given a cluster's: the others (every web
  // application) issue without reading the cluster list.
  const clusters = client.audiences.length > 0 ? ((await context.clusterAudiences?.()) ?? []) : [];
  const forCluster = audience.some((aud) => clusters.includes(aud));
  // A cluster, or a client, that requires a second factor gets no token from a sign-in without one.
  if (forCluster || client.requireMfa === true)
    assertMfaFor(forCluster ? ((await context.mfaClusters?.()) ?? []) : [], audience, grant.amr, client);
  const access = await issueAccessToken(
    context.keys,
    context.issuer,
    {
      subject: user.id,
      clientId: client.clientId,
      audience,
      scope,
      grantId: grant.id,
      authTime,
      lifetimeSeconds: client.accessTokenTtl,
      claims: forCluster ? { ...clusterClaims(user, scope), ...assurance } : assurance,
    },
    context.clock,
    context.random,
  );
  const response: TokenResponse = {
    access_token: access.token,
    token_type: 'Bearer',
    expires_in: access.expiresIn,
    scope: scope.join(' '),
  };
  if (scope.includes('openid')) {
    response.id_token = await issueIdToken(
      context.keys,
      context.issuer,
      {
        subject: user.id,
        clientId: client.clientId,
        authTime,
        grantId: grant.id,
        ...(request.nonce ? { nonce: request.nonce } : {}),
        accessToken: access.token,
        claims: { ...userClaims(user, scope), ...assurance },
        lifetimeSeconds: context.lifetimes.idToken,
      },
      context.clock,
    );
  }
  const issued: AuditEventDraft = {
    type: 'token.issued',
    actor: { kind: 'client', id: client.clientId },
    subject: user.id,
    clientId: client.clientId,
    ...requestOrigin(context),
    details: {
      grantType: request.grantType ?? 'unknown',
      scopes: scope,
      audience,
      jti: access.jti,
      grantId: grant.id,
    },
  };
  const events = [...(request.events ?? []), issued];
  if (request.refreshScope === undefined) {
    await recordAuditEvent(context.storage, events, context.clock, context.auditIds);
    return response;
  }
  const now = context.clock.now();
  const refreshToken = request.refreshSecret ?? generateSecret(context.random);
  const refreshScope = request.refreshScope;
  const hash = await hashSecret(refreshToken);
  await context.storage.transaction(async (tx) => {
    await storeRefreshToken(
      tx,
      {
        hash,
        grantId: grant.id,
        clientId: client.clientId,
        userId: user.id,
        scope: refreshScope,
        createdAt: new Date(now),
        expiresAt: new Date(Math.min(now + client.refreshTokenTtl * 1000, grant.expiresAt.getTime())),
        usedAt: null,
      },
      request.refreshSecret !== undefined,
    );
    await recordAuditEvent(tx, events, context.clock, context.auditIds);
  });
  response.refresh_token = refreshToken;
  return response;
}

/**
 * The token set of a sign-in that happened just now, outside a browser session (the password
 * grant, a federated sign-in answered as tokens): a new grant of `user` to `client` for `scope`,
 * its tokens, and a refresh token when the client and scope allow one.
 * @example return issueSignInTokens(context, { user, client, scope });
 */
export async function issueSignInTokens(
  context: TokenEndpointContext,
  request: {
    user: UserRecord;
    client: ClientRecord;
    scope: string[];
    resource?: string | string[];
    /** The external identity the sign-in went through, re-checked on refresh. */
    upstream?: GrantUpstream | undefined;
    /** How the person signed in (RFC 8176): `['pwd']` for the password grant. */
    amr?: string[];
    grantType?: string;
  },
): Promise<TokenResponse> {
  const { user, client, scope } = request;
  // What this sign-in asked for is all its grant covers: a refresh may narrow it, never widen it.
  const audience = tokenAudience(request.resource, client);
  const grant = await openGrant(context, {
    userId: user.id,
    clientId: client.clientId,
    scope,
    authTime: new Date(context.clock.now()),
    sessionId: null,
    upstream: request.upstream ?? null,
    amr: request.amr ?? null,
    resources: audience,
  });
  return issueUserTokens(context, {
    grant,
    client,
    user,
    scope,
    audience,
    ...(request.grantType === undefined ? {} : { grantType: request.grantType }),
    ...(grantsRefreshToken(client, scope, context) ? { refreshScope: scope } : {}),
  });
}

/**
 * Stores a refresh token whose plaintext may be derived twice (a successor in the reuse window):
 * the second store of the same token is not an error.
 */
async function storeRefreshToken(
  storage: Pick<TokenEndpointContext['storage'], 'refreshTokens'>,
  record: RefreshTokenRecord,
  derived: boolean,
): Promise<void> {
  try {
    await storage.refreshTokens.create(record);
  } catch (error) {
    if (!(derived && error instanceof StorageConflictError)) throw error;
  }
}
