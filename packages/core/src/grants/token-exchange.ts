import {
  ISSUED_TOKEN_TYPE,
  SUBJECT_TOKEN_TYPES,
  type TokenExchangeGrantRequest,
  type TokenResponse,
} from '@idgate/schema';
import { type AuditEventDraft, completeAuditEvents } from '../audit/record.js';
import { OAuthProtocolError } from '../errors.js';
import { ACR } from '../factors/assurance.js';
import { base64url } from '../internal/encoding.js';
import type { JwsCrypto } from '../keys/jws-crypto.js';
import type { ClientRecord, ClusterRecord, SubjectTokenUseRecord, TrustRecord } from '../model.js';
import { webCryptoRandom } from '../ports/runtime.js';
import {
  ACCESS_TOKEN_REJECTION_MESSAGES,
  type AccessTokenInput,
  accessTokenClaims,
  type LiveTokenRejection,
  signAccessToken,
} from '../tokens/access-token.js';
import type { LiveAccessToken } from '../tokens/access-token-check.js';
import { clusterClaims } from '../tokens/user-claims.js';
import {
  decodeSubjectToken,
  evaluateSubjectToken,
  runClaims,
  TRUST_RULE_ERRORS,
  type TrustRule,
} from '../trusts/evaluate.js';
import type { TrustKeySource } from '../trusts/keys.js';
import type { SpendAndRecord } from '../trusts/spent.js';
import { requestOrigin, type TokenEndpointContext } from './context.js';

/** What the token exchange grant reads, beside the token endpoint's context. */
export interface TokenExchangeContext {
  /** Every trust (may be answered from memory). */
  trusts(): Promise<readonly TrustRecord[]>;
  /** Every registered cluster (may be answered from memory). */
  clusters(): Promise<readonly ClusterRecord[]>;
  keys: TrustKeySource;
  /** Signature primitives for RS256 and ES256 subject tokens (see `SubjectTokenContext`); default jose. */
  jws?: JwsCrypto;
  /**
   * Spends a subject `jti` (kept until the subject token expires) and stores the exchange's
   * event, in one write (`groupSpends`, or `spendAndRecord` for a transaction of its own).
   */
  spend: SpendAndRecord;
  /**
   * Whether one of idgate's own access tokens is live (the check of token review and
   * introspection): given, a subject token idgate issued is narrowed to one of its clusters.
   */
  checkOwnToken?(
    token: string,
  ): Promise<{ ok: true; token: LiveAccessToken } | { ok: false; reason: LiveTokenRejection }>;
}

/**
 * Stores an exchange's event before the answer: grouped with concurrent ones through the context's
 * audit batcher when there is one (as client_credentials does), else on its own.
 */
async function recordExchange(context: TokenEndpointContext, draft: AuditEventDraft): Promise<void> {
  const events = completeAuditEvents([draft], context.clock, context.auditIds);
  if (context.auditBatcher !== undefined) await context.auditBatcher.append(events);
  else await context.storage.auditEvents.append(events);
}

/** The prefix of the `client_id` (and `sub`) of a token issued by a token exchange: `trust:<name>`. */
export const TRUST_CLIENT_PREFIX = 'trust:';

/**
 * Finds the one cluster that `audience` and `resource` name (by name or by audience).
 * @throws OAuthProtocolError `invalid_request` when none is given, `invalid_target` for an unknown
 * cluster or more than one.
 */
export function targetCluster(
  request: Pick<TokenExchangeGrantRequest, 'audience' | 'resource'>,
  clusters: readonly ClusterRecord[],
): ClusterRecord {
  const named = [
    ...(request.audience === undefined ? [] : [request.audience]),
    ...(request.resource === undefined
      ? []
      : Array.isArray(request.resource)
        ? request.resource
        : [request.resource]),
  ] as string[];
  if (named.length === 0)
    throw new OAuthProtocolError('invalid_request', 'audience or resource naming a cluster is required');
  const found = new Map<string, ClusterRecord>();
  for (const value of named) {
    const cluster = clusters.find((c) => c.audience === value || c.name === value.toLowerCase());
    if (cluster === undefined)
      throw new OAuthProtocolError('invalid_target', `${value.slice(0, 128)} is not a registered cluster`);
    found.set(cluster.name, cluster);
  }
  if (found.size > 1)
    throw new OAuthProtocolError('invalid_target', 'a token exchange answers a token for one cluster only');
  return [...found.values()][0] as ClusterRecord;
}

/**
 * Token exchange (RFC 8693): a JWT of an issuer a trust names (a CI job's OIDC token, a pod's
 * service-account token) for a short-lived access token to one cluster the trust allows. The token
 * carries `preferred_username` and `groups` from the trust, `client_id` `trust:<name>`, `sid` a
 * fresh exchange id and, given an `actor_token` some trust accepts, `act` (RFC 8693 §4.1). No
 * refresh token. Lifetime: `expires_in` if asked (over the trust's maximum is refused), else the
 * trust's maximum, never past the subject token's `exp`. Each subject `jti` is accepted once.
 * Every answer and refusal is recorded as `token.exchanged`.
 * @example const tokens = await tokenExchangeGrant(request, undefined, context, exchange);
 */
export async function tokenExchangeGrant(
  request: TokenExchangeGrantRequest,
  client: ClientRecord | undefined,
  context: TokenEndpointContext,
  exchange: TokenExchangeContext | undefined,
): Promise<TokenResponse> {
  const decoded = decodeSubjectToken(request.subject_token);
  const unverified = decoded?.claims ?? {};
  const audit = {
    trust: null as string | null,
    issuer: typeof unverified.iss === 'string' ? unverified.iss.slice(0, 512) : null,
    subject: typeof unverified.sub === 'string' ? unverified.sub.slice(0, 512) : null,
    subjectJti: typeof unverified.jti === 'string' ? unverified.jti.slice(0, 256) : null,
    run: runClaims(unverified),
    cluster: null as string | null,
    actor: null as string | null,
  };
  const event: Issue['event'] = (details) => ({
    type: 'token.exchanged',
    actor: { kind: 'client', id: client?.clientId ?? null },
    subject: audit.subject,
    clientId: client?.clientId ?? null,
    ...requestOrigin(context),
    outcome: details.reason === null ? 'success' : 'failure',
    details: { ...audit, ...details },
  });
  const refuse = async (
    error: 'invalid_grant' | 'invalid_target' | 'invalid_request' | 'temporarily_unavailable',
    reason: string,
    rule: TrustRule | 'request' | 'target' | 'actor',
  ): Promise<never> => {
    await recordExchange(context, event({ jti: null, lifetime: null, reason: `${rule}: ${reason}` }));
    throw new OAuthProtocolError(error, reason);
  };

  if (exchange === undefined) return refuse('invalid_request', 'token exchange is not enabled', 'request');
  if (!(SUBJECT_TOKEN_TYPES as readonly string[]).includes(request.subject_token_type))
    return refuse(
      'invalid_request',
      `subject_token_type must be one of ${SUBJECT_TOKEN_TYPES.join(', ')}`,
      'request',
    );
  if (request.requested_token_type !== undefined && request.requested_token_type !== ISSUED_TOKEN_TYPE)
    return refuse('invalid_request', `requested_token_type must be ${ISSUED_TOKEN_TYPE}`, 'request');
  if ((request.actor_token === undefined) !== (request.actor_token_type === undefined))
    return refuse('invalid_request', 'actor_token and actor_token_type go together', 'request');
  if (
    request.actor_token_type !== undefined &&
    !(SUBJECT_TOKEN_TYPES as readonly string[]).includes(request.actor_token_type)
  )
    return refuse(
      'invalid_request',
      `actor_token_type must be one of ${SUBJECT_TOKEN_TYPES.join(', ')}`,
      'request',
    );

  let cluster: ClusterRecord;
  try {
    cluster = targetCluster(request, await exchange.clusters());
  } catch (error) {
    if (error instanceof OAuthProtocolError)
      return refuse(error.code as 'invalid_request' | 'invalid_target', error.message, 'target');
    throw error;
  }
  audit.cluster = cluster.name;
  // One of idgate's own tokens, narrowed to one cluster it already reaches.
  if (exchange.checkOwnToken !== undefined && unverified.iss === context.issuer)
    return narrowOwnToken(request, cluster, context, exchange, { refuse, event });
  // A workload has no second factor: a cluster that requires one takes no exchanged token (its
  // TokenReview and its structured-authentication rule would refuse it anyway).
  if (cluster.requireMfa)
    return refuse(
      'invalid_target',
      `cluster ${cluster.name} requires a sign-in with a second factor, which a token exchange cannot give`,
      'target',
    );

  const trusts = await exchange.trusts();
  const subjectContext = {
    keys: exchange.keys,
    clock: context.clock,
    ...(exchange.jws === undefined ? {} : { jws: exchange.jws }),
  };
  const decision = await evaluateSubjectToken(request.subject_token, trusts, subjectContext, decoded);
  if (!decision.ok) {
    if (decision.trust !== undefined) audit.trust = decision.trust.name;
    return refuse(TRUST_RULE_ERRORS[decision.rule], decision.reason, decision.rule);
  }
  const { trust, claims } = decision;
  audit.trust = trust.name;
  if (!trust.clusters.includes(cluster.name))
    return refuse('invalid_target', `trust ${trust.name} does not allow cluster ${cluster.name}`, 'cluster');

  let lifetime = decision.maxLifetime;
  if (request.expires_in !== undefined) {
    const asked = Number(request.expires_in);
    if (asked > trust.maxTtl)
      return refuse(
        'invalid_request',
        `expires_in ${asked} is over the ${trust.maxTtl} seconds trust ${trust.name} allows`,
        'lifetime',
      );
    lifetime = Math.min(lifetime, asked);
  }

  let act: Record<string, string> | undefined;
  if (request.actor_token !== undefined) {
    const actor = await evaluateSubjectToken(request.actor_token, trusts, subjectContext);
    if (!actor.ok) return refuse(TRUST_RULE_ERRORS[actor.rule], `actor_token: ${actor.reason}`, 'actor');
    act = { sub: actor.username, iss: actor.claims.iss };
    audit.actor = actor.username;
  }

  const random = context.random ?? webCryptoRandom;
  const exchangeId = `tx_${base64url(random.bytes(12))}`;
  const clientId = `${TRUST_CLIENT_PREFIX}${trust.name}`;
  return spendAndIssue(context, exchange, {
    use: { issuer: claims.iss, jti: claims.jti as string, expiresAt: new Date(claims.exp * 1000) },
    token: {
      subject: `${clientId}:${claims.sub}`.slice(0, 512),
      clientId,
      audience: [cluster.audience],
      scope: [],
      grantId: exchangeId,
      lifetimeSeconds: lifetime,
      claims: {
        preferred_username: decision.username,
        groups: decision.groups,
        trust: trust.name,
        ...(act === undefined ? {} : { act }),
      },
    },
    event,
  });
}

/** What {@link spendAndIssue} spends, issues and records. */
interface Issue {
  /** The subject token's `jti`, spent. */
  use: SubjectTokenUseRecord;
  /** The access token issued for it. */
  token: AccessTokenInput;
  /** The `token.exchanged` event: `reason` null for the token issued, else why not. */
  event: (details: { jti: string | null; lifetime: number | null; reason: string | null }) => AuditEventDraft;
}

/**
 * The end of every exchange: the subject `jti` is spent and the event of the token about to be
 * issued stored, in one write; then the token is signed. A `jti` spent already is refused (its
 * event says so) before any signing. Should signing fail after the write, a second event records
 * that no token went out.
 */
async function spendAndIssue(
  context: TokenEndpointContext,
  exchange: TokenExchangeContext,
  issue: Issue,
): Promise<TokenResponse> {
  const prepared = accessTokenClaims(
    context.issuer,
    issue.token,
    context.clock,
    context.random ?? webCryptoRandom,
  );
  const record = (details: Parameters<Issue['event']>[0]) =>
    completeAuditEvents([issue.event(details)], context.clock, context.auditIds);
  const fresh = await exchange.spend(issue.use, new Date(context.clock.now()), (spent) =>
    record(
      spent
        ? { jti: prepared.jti, lifetime: prepared.expiresIn, reason: null }
        : { jti: null, lifetime: null, reason: `replayed: ${REPLAYED}` },
    ),
  );
  if (!fresh) throw new OAuthProtocolError('invalid_grant', REPLAYED);
  let token: string;
  try {
    token = await signAccessToken(context.keys, prepared);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    await recordExchange(context, issue.event({ jti: null, lifetime: null, reason: `signing: ${why}` }));
    throw error;
  }
  return {
    access_token: token,
    token_type: 'Bearer',
    expires_in: prepared.expiresIn,
    issued_token_type: ISSUED_TOKEN_TYPE,
  };
}

const REPLAYED = 'subject_token was used already (its jti is spent)';

/**
 * Narrows one of idgate's own access tokens (RFC 8693 §2.1's "a more narrowly scoped token"): a
 * person's live token whose audiences include `cluster`'s gives a token for that cluster alone,
 * for the same person, client, grant (`sid`, so revoking the grant revokes it), scope and sign-in
 * (`auth_time`, `acr`, `amr`: a cluster that requires a second factor takes it only from a sign-in
 * with one), living no longer than the subject token. Never wider: another audience is refused.
 */
async function narrowOwnToken(
  request: TokenExchangeGrantRequest,
  cluster: ClusterRecord,
  context: TokenEndpointContext,
  exchange: TokenExchangeContext,
  answer: {
    refuse: (
      error: 'invalid_grant' | 'invalid_target' | 'invalid_request',
      reason: string,
      rule: TrustRule | 'request' | 'target' | 'actor',
    ) => Promise<never>;
    event: Issue['event'];
  },
): Promise<TokenResponse> {
  const { refuse } = answer;
  if (request.actor_token !== undefined)
    return refuse('invalid_request', 'actor_token is not taken when narrowing an idgate token', 'actor');
  const checked = await (exchange.checkOwnToken as NonNullable<TokenExchangeContext['checkOwnToken']>)(
    request.subject_token,
  );
  if (!checked.ok)
    return refuse(
      'invalid_grant',
      `subject_token: ${ACCESS_TOKEN_REJECTION_MESSAGES[checked.reason]}`,
      checked.reason === 'expired' ? 'expired' : 'signature',
    );
  const { claims, user, audience, scope } = checked.token;
  if (user === undefined)
    return refuse('invalid_grant', "only a person's idgate token can be narrowed", 'request');
  if (!audience.includes(cluster.audience))
    return refuse(
      'invalid_target',
      `the subject token is not for cluster ${cluster.name}: an idgate token is narrowed to one of its audiences, never widened`,
      'cluster',
    );
  const raw = claims as unknown as { acr?: unknown; amr?: unknown };
  if (cluster.requireMfa && raw.acr !== ACR.mfa)
    return refuse(
      'invalid_target',
      `cluster ${cluster.name} requires a sign-in with a second factor (acr ${ACR.mfa}) and the subject token's had none`,
      'target',
    );
  const now = context.clock.now();
  let lifetime = claims.exp - Math.floor(now / 1000);
  if (request.expires_in !== undefined) lifetime = Math.min(lifetime, Number(request.expires_in));
  if (lifetime < 1) return refuse('invalid_grant', 'subject_token: token has expired', 'expired');
  return spendAndIssue(context, exchange, {
    use: { issuer: claims.iss, jti: claims.jti, expiresAt: new Date(claims.exp * 1000) },
    token: {
      subject: user.id,
      clientId: claims.client_id,
      audience: [cluster.audience],
      scope,
      ...(claims.sid === undefined ? {} : { grantId: claims.sid }),
      ...(claims.auth_time === undefined ? {} : { authTime: claims.auth_time }),
      lifetimeSeconds: lifetime,
      claims: {
        ...clusterClaims(user, scope),
        ...(typeof raw.acr === 'string' ? { acr: raw.acr } : {}),
        ...(Array.isArray(raw.amr) ? { amr: raw.amr } : {}),
      },
    },
    event: answer.event,
  });
}
