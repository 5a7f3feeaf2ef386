import type { RefreshTokenGrantRequest, TokenResponse } from '@idgate/schema';
import { recordAuditEvent } from '../audit/record.js';
import { assertMfaFor } from '../clusters/mfa.js';
import { OAuthProtocolError } from '../errors.js';
import { base64url, utf8 } from '../internal/encoding.js';
import type { ClientRecord, GrantRecord, RefreshTokenRecord } from '../model.js';
import { parseScope, tokenAudience, tokenAudienceWithin } from '../scopes.js';
import { hashSecret } from '../secrets.js';
import { madeBefore } from '../tokens/access-token-check.js';
import { requestOrigin, type TokenEndpointContext } from './context.js';
import { revokeReplayedGrant } from './replay.js';
import { revokeGrant } from './revoke-grant.js';
import { grantStep } from './step.js';
import type { UpstreamRevalidation } from './upstream-revalidation.js';
import { issueUserTokens } from './user-tokens.js';

const invalid = (description: string) => new OAuthProtocolError('invalid_grant', description);

/**
 * Refresh token grant (RFC 6749 §6) with rotation: every use returns a new refresh token and
 * retires the old one; presenting a retired one again revokes the whole grant (RFC 9700 §4.14.2)
 * — unless it comes back within the configured reuse window (`context.refreshReuse`) and its
 * successor has not been used yet: then it answers that same successor, so concurrent refreshes
 * of one token (two tabs, several kubectl processes) do not sign the user out.
 * The scope may be narrowed for the new access token, never widened; the new refresh token keeps
 * the grant's scope. So may the audience: `resource` names some of what the grant covers (the
 * resources approved at sign-in), and without it the token is for all of them. A grant from an
 * external identity provider is re-checked upstream when due (`context.revalidate`): one the
 * upstream no longer knows, or has not confirmed for longer than the limit while it cannot be
 * asked, is revoked and refused.
 * @example const tokens = await refreshTokenGrant(request, client, context);
 */
export async function refreshTokenGrant(
  request: RefreshTokenGrantRequest,
  client: ClientRecord,
  context: TokenEndpointContext,
): Promise<TokenResponse> {
  const { storage, clock } = context;
  const hash = await hashSecret(request.refresh_token);
  const presented = await storage.refreshTokens.findByHash(hash);
  // Checked before the token is used, so another client cannot burn a token it stole.
  if (presented === undefined || presented.clientId !== client.clientId)
    throw invalid('the refresh token is not valid');
  if (presented.expiresAt.getTime() <= clock.now()) throw invalid('the refresh token has expired');
  const requested = parseScope(request.scope);
  // RFC 8707 §2.2: a refresh may ask for some of the resources its grant covers (what the person
  // approved at sign-in), never another; checked before the token rotates, so a bad resource does
  // not burn it.
  const resource = refreshResource(request.resource);
  // So is a token for a cluster, or a client, that requires a second factor the grant's sign-in
  // did not have: a refresh never raises assurance.
  const mfaClusters = client.audiences.length > 0 ? ((await context.mfaClusters?.()) ?? []) : [];
  if (resource !== undefined || mfaClusters.length > 0 || client.requireMfa === true) {
    const grant = await storage.grants.findById(presented.grantId);
    // A grant that is gone is refused as such when the token is claimed.
    if (grant !== undefined)
      assertMfaFor(mfaClusters, refreshAudience(resource, grant, client), grant.amr, client);
  }
  const widened = requested?.filter((scope) => !presented.scope.includes(scope)) ?? [];
  if (widened.length > 0) {
    throw new OAuthProtocolError('invalid_scope', `scope was not granted: ${widened.join(' ')}`);
  }

  const successor = await successorOf(request.refresh_token, context);
  const rotation = { client, hash, successor, presented, ...(resource === undefined ? {} : { resource }) };
  const scope = requested;

  // One transaction: the claim, the grant's use, the successor and the events — or the claim and
  // the revocation of a reused token's grant with its event.
  const claimed = await grantStep(context, client, async (step) => {
    const { token, grant } = await claimToken(rotation, step);
    // A federated grant due for a check upstream is asked outside the transaction (a network call
    // must not hold the rows, and the check writes the grant): the claim commits first.
    if (context.revalidate !== undefined && (grant.upstream ?? null) !== null) return { token, grant };
    return { response: await rotate(rotation, token, grant, scope, 'current', step) };
  });
  if ('response' in claimed) return claimed.response;
  const { token, grant } = claimed;
  const revalidation = (await context.revalidate?.(grant, context.log)) ?? 'current';
  if (revalidation === 'gone') {
    await revokeUpstreamGrant(client, grant, context, 'unknown_upstream');
    throw invalid('the identity provider no longer knows this account');
  }
  if (revalidation === 'unconfirmed') {
    // Availability yields to freshness at the limit: the person signs in again once the provider answers.
    await revokeUpstreamGrant(client, grant, context, 'upstream_unavailable_too_long');
    const since = grant.upstream?.validatedAt.toISOString() ?? 'the sign-in';
    throw invalid(`the identity provider could not confirm the account since ${since}`);
  }
  return grantStep(context, client, (step) => rotate(rotation, token, grant, scope, revalidation, step));
}

/** Revokes a grant its upstream no longer vouches for, with the failed re-check's event, in one transaction. */
async function revokeUpstreamGrant(
  client: ClientRecord,
  grant: GrantRecord,
  context: TokenEndpointContext,
  reason: 'unknown_upstream' | 'upstream_unavailable_too_long',
): Promise<void> {
  const { clock } = context;
  await context.storage.transaction(async (tx) => {
    await revokeGrant(
      { clock, storage: tx, maxTokenLifetimeSeconds: context.lifetimes.maxAccessToken },
      grant.id,
    );
    await recordAuditEvent(
      tx,
      upstreamEvent(client, grant, context, 'failure', reason),
      clock,
      context.auditIds,
    );
  });
}

/** What one rotation works from. */
interface Rotation {
  client: ClientRecord;
  /** The hash of the presented token. */
  hash: string;
  successor: string | undefined;
  presented: RefreshTokenRecord;
  resource?: string[];
}

/**
 * Claims the presented token and records the use on its grant; a reused token (outside the reuse
 * window) revokes the grant, with its event, and is refused.
 */
async function claimToken(
  rotation: Rotation,
  context: TokenEndpointContext,
): Promise<{ token: RefreshTokenRecord; grant: GrantRecord }> {
  const { storage, clock } = context;
  const { client, presented } = rotation;
  const use = await storage.refreshTokens.use(rotation.hash, new Date(clock.now()));
  if (use.status === 'unknown') throw invalid('the refresh token is not valid');
  if (use.status === 'reused' && !(await withinReuseWindow(use.token, rotation.successor, context))) {
    await revokeReplayedGrant(context, {
      type: 'refresh.reuse-detected',
      grantId: presented.grantId,
      subject: presented.userId,
      clientId: client.clientId,
      presentedBy: client.clientId,
    });
    throw invalid('the refresh token was already used; the grant is revoked');
  }
  const token = use.token;
  // Reads the grant and records this use in one statement (the admin API lists it).
  const grant = await storage.grants.recordUse(
    token.grantId,
    new Date(clock.now()),
    context.sourceAddress ?? null,
  );
  if (grant === undefined || grant.revokedAt !== null) throw invalid('the grant has been revoked');
  if (grant.expiresAt.getTime() <= clock.now()) throw invalid('the grant has expired');
  // A grant opened before a not-before cannot be rotated past it (its tokens were issued before).
  if (madeBefore(grant.createdAt, await context.notBefore?.(grant.clientId, grant.userId)))
    throw invalid('the grant has been revoked (opened before a not-before)');
  return { token, grant };
}

/** Issues the new token set of a claimed token: the access token, the successor, the events. */
async function rotate(
  rotation: Rotation,
  token: RefreshTokenRecord,
  grant: GrantRecord,
  requested: string[] | undefined,
  revalidation: Exclude<UpstreamRevalidation, 'gone' | 'unconfirmed'>,
  context: TokenEndpointContext,
): Promise<TokenResponse> {
  const { client, successor, resource } = rotation;
  const audience = refreshAudience(resource, grant, client);
  const user = await context.storage.users.findById(token.userId);
  if (user === undefined || user.disabled) throw invalid('the account is not active');
  return issueUserTokens(context, {
    grant,
    client,
    user,
    scope: requested ?? token.scope,
    refreshScope: token.scope,
    grantType: 'refresh_token',
    events: [
      // Recorded with the tokens it let through; `unavailable` keeps the grant on what is known.
      ...(revalidation === 'revalidated' ? [upstreamEvent(client, grant, context, 'success', null)] : []),
      ...(revalidation === 'unavailable'
        ? [upstreamEvent(client, grant, context, 'success', 'upstream_unavailable')]
        : []),
      {
        type: 'refresh.rotated',
        actor: { kind: 'client', id: client.clientId },
        subject: user.id,
        clientId: client.clientId,
        ...requestOrigin(context),
        details: { grantId: grant.id },
      },
    ],
    ...(successor === undefined ? {} : { refreshSecret: successor }),
    audience,
  });
}

const upstreamEvent = (
  client: ClientRecord,
  grant: GrantRecord,
  context: TokenEndpointContext,
  outcome: 'success' | 'failure',
  reason: string | null,
) =>
  ({
    type: 'upstream.revalidated',
    actor: { kind: 'client', id: client.clientId },
    subject: grant.userId,
    clientId: client.clientId,
    ...requestOrigin(context),
    outcome,
    details: { provider: grant.upstream?.provider ?? '', grantId: grant.id, reason },
  }) as const;

/**
 * The key successors are derived with: HMAC-SHA-256 under a key derived (HKDF) from the server
 * secret, so only the server can compute a token's successor, and only from the token itself.
 * @example const successorKey = await refreshSuccessorKey(config.secret);
 */
export async function refreshSuccessorKey(secret: string): Promise<CryptoKey> {
  const material = await crypto.subtle.importKey('raw', utf8(secret), 'HKDF', false, ['deriveKey']);
  return crypto.subtle.deriveKey(
    { name: 'HKDF', hash: 'SHA-256', salt: utf8('idgate refresh successor v1'), info: new Uint8Array() },
    material,
    { name: 'HMAC', hash: 'SHA-256', length: 256 },
    false,
    ['sign'],
  );
}

/** The successor of a refresh token when a reuse window is on: the same for every presentation. */
async function successorOf(token: string, context: TokenEndpointContext): Promise<string | undefined> {
  const reuse = context.refreshReuse;
  if (reuse === undefined || reuse.windowSeconds <= 0) return undefined;
  return base64url(new Uint8Array(await crypto.subtle.sign('HMAC', reuse.successorKey, utf8(token))));
}

/**
 * Whether a token rotated by someone else may be answered with its successor: it was rotated
 * within the window and its successor has not been used (once the chain moved on, presenting an
 * older token is reuse, whenever it happens).
 */
async function withinReuseWindow(
  token: RefreshTokenRecord,
  successor: string | undefined,
  context: TokenEndpointContext,
): Promise<boolean> {
  const window = context.refreshReuse?.windowSeconds ?? 0;
  if (successor === undefined || token.usedAt === null) return false;
  if (context.clock.now() - token.usedAt.getTime() > window * 1000) return false;
  const next = await context.storage.refreshTokens.findByHash(await hashSecret(successor));
  // Not stored yet: the winner is still issuing it; it will be the same token.
  return next === undefined || next.usedAt === null;
}

function refreshResource(resource: string | string[] | undefined): string[] | undefined {
  if (resource === undefined) return undefined;
  const values = (Array.isArray(resource) ? resource : [resource]).filter((value) => value !== '');
  return values.length === 0 ? undefined : values;
}

/**
 * The `aud` of a refreshed access token: within what the grant covers (see `tokenAudienceWithin`).
 * A grant opened before idgate recorded its resources is refreshed only without `resource`, for
 * the client's default audience as before; asking it for one is `invalid_target`.
 */
function refreshAudience(resource: string[] | undefined, grant: GrantRecord, client: ClientRecord): string[] {
  const covered = grant.resources ?? null;
  if (covered !== null) return tokenAudienceWithin(resource, covered, client);
  if (resource !== undefined) {
    throw new OAuthProtocolError(
      'invalid_target',
      `this grant was opened before idgate recorded the resources a sign-in approves: refresh it without resource, or sign in again to ask for ${resource.join(' ')}`,
    );
  }
  return tokenAudience(undefined, client);
}
