import { type AuditEventIds, originFields, type RequestOrigin, recordAuditEvent } from '../audit/record.js';
import { ACR, acrOf, wantsMfa } from '../factors/assurance.js';
import type { ClientRecord, GrantUpstream, UserRecord } from '../model.js';
import type { AuditEventRepository } from '../ports/audit-storage.js';
import type { AuthorizationCodeRepository, ConsentRepository } from '../ports/oidc-storage.js';
import type { Clock, Random } from '../ports/runtime.js';
import { generateSecret, hashSecret } from '../secrets.js';
import { AuthorizationError, type AuthorizationRequest } from './request.js';

/** Who is signed in for an authorization request. */
export interface Authentication {
  user: UserRecord;
  authTime: Date;
  /** The browser session, when there is one. */
  sessionId: string | null;
  /** Whether the user signed in during this very request (satisfies `prompt=login`). */
  fresh: boolean;
  /**
   * The external identity the session signed in through, as the session recorded it at sign-in:
   * every code issued from the session hands this same record to its grant. Absent or null for a
   * local sign-in.
   */
  upstream?: GrantUpstream | null;
  /** How the person signed in (RFC 8176), as the session recorded it; absent or null for none. */
  amr?: string[] | null;
}

/** What the authorization endpoint does next. */
export type AuthorizationStep =
  | { kind: 'login' }
  | {
      kind: 'consent';
      /** The scopes not consented to yet. */
      missing: string[];
      /** The resources (cluster audiences, APIs) not consented to yet. */
      missingResources: string[];
    }
  | { kind: 'issue' };

/**
 * Decides the next step of an authorization request (OIDC Core §3.1.2.3–§3.1.2.4): sign in when
 * nobody is, `prompt=login` asks for it, or `max_age` has passed; then ask consent unless the
 * client is trusted or the user already granted every scope and every resource (cluster) of the
 * request (and `prompt=consent` does not insist);
 * then issue. With `prompt=none`, a needed step is the error `login_required` or
 * `consent_required`, sent back to the client.
 * @example const step = await nextAuthorizationStep(request, client, authentication, { clock, consents });
 */
export async function nextAuthorizationStep(
  request: AuthorizationRequest,
  client: ClientRecord,
  authentication: Authentication | undefined,
  context: { clock: Clock; consents: ConsentRepository; consentGiven?: boolean },
): Promise<AuthorizationStep> {
  const back = (error: 'login_required' | 'consent_required', description: string): never => {
    throw new AuthorizationError(error, description, request.redirectUri, request.state);
  };
  const now = context.clock.now();
  const tooOld =
    authentication !== undefined &&
    request.maxAge !== undefined &&
    now - authentication.authTime.getTime() > request.maxAge * 1000;
  const needsLogin =
    authentication === undefined ||
    authentication.user.disabled ||
    tooOld ||
    (request.prompt.includes('login') && !authentication.fresh) ||
    // OIDC Core §3.1.2.1 acr_values: a session without a second factor signs in again with one.
    (wantsMfa(request.acrValues) && acrOf(authentication.amr) !== ACR.mfa);
  if (needsLogin) {
    if (request.prompt.includes('none')) back('login_required', 'the user is not signed in');
    return { kind: 'login' };
  }
  if (client.trusted || context.consentGiven) return { kind: 'issue' };
  const consent = await context.consents.find((authentication as Authentication).user.id, client.clientId);
  const missing = request.scope.filter((scope) => !consent?.scope.includes(scope));
  // A cluster the person never agreed to is asked for, as a scope is (RFC 8707 §2: the resources
  // are part of what is authorized).
  const missingResources = (request.resource ?? []).filter(
    (resource) => !(consent?.resources ?? []).includes(resource),
  );
  if (missing.length > 0 || missingResources.length > 0 || request.prompt.includes('consent')) {
    if (request.prompt.includes('none'))
      back('consent_required', 'the user has not consented to this client');
    return { kind: 'consent', missing, missingResources };
  }
  return { kind: 'issue' };
}

/** Authorization codes live this long (RFC 6749 §4.1.2 recommends at most 10 minutes; 60 s is plenty). */
export const AUTHORIZATION_CODE_TTL_SECONDS = 60;

/**
 * Issues a single-use authorization code for a decided request; only its hash is stored.
 * @example const code = await issueAuthorizationCode(request, authentication, { clock, codes: storage.authorizationCodes });
 */
export async function issueAuthorizationCode(
  request: AuthorizationRequest,
  authentication: Authentication,
  context: {
    clock: Clock;
    random?: Random;
    auditIds?: AuditEventIds;
    codes: AuthorizationCodeRepository;
    /** Where the `code.issued` event goes, and where the request came from. */
    audit?: { events: AuditEventRepository; origin?: RequestOrigin };
  },
): Promise<string> {
  const code = generateSecret(context.random);
  const now = context.clock.now();
  const hash = await hashSecret(code);
  await context.codes.create({
    hash,
    clientId: request.clientId,
    userId: authentication.user.id,
    redirectUri: request.redirectUri,
    scope: request.scope,
    nonce: request.nonce ?? null,
    codeChallenge: request.codeChallenge ?? null,
    codeChallengeMethod: request.codeChallengeMethod ?? null,
    resource: request.resource ?? null,
    authTime: authentication.authTime,
    sessionId: authentication.sessionId,
    upstream: authentication.upstream ?? null,
    amr: authentication.amr ?? null,
    grantId: null,
    createdAt: new Date(now),
    expiresAt: new Date(now + AUTHORIZATION_CODE_TTL_SECONDS * 1000),
    consumedAt: null,
  });
  if (context.audit !== undefined) {
    const { events, origin } = context.audit;
    await recordAuditEvent(
      { auditEvents: events },
      {
        type: 'code.issued',
        actor: { kind: 'user', id: authentication.user.id },
        subject: authentication.user.id,
        clientId: request.clientId,
        ...originFields(origin),
        // The grant opens when the code is redeemed: its `code.redeemed` has this `codeId`.
        details: { codeId: await authorizationCodeId(hash), grantId: null, scopes: request.scope },
      },
      context.clock,
      context.auditIds,
    );
  }
  return code;
}

/**
 * The id an authorization code has in the audit trail, from the hash it is stored as: the
 * SHA-256 of that hash, cut to 22 characters (132 bits). It names the code in `code.issued`,
 * `code.redeemed` and `code.replayed`, and neither is nor leads to the code or its stored hash.
 * @example await authorizationCodeId(await hashSecret(code)) // 'Xq3…' (22 characters)
 */
export async function authorizationCodeId(codeHash: string): Promise<string> {
  return (await hashSecret(`idgate authorization code id\0${codeHash}`)).slice(0, 22);
}

/**
 * The URL an authorization response goes to: the registered redirect_uri with its own query kept
 * (RFC 6749 §3.1.2), plus the response parameters and `iss` (RFC 9207).
 * @example authorizationResponseUrl('https://app/cb', issuer, { code, state })
 */
export function authorizationResponseUrl(
  redirectUri: string,
  issuer: string,
  parameters: Record<string, string | undefined>,
): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(parameters))
    if (value !== undefined) url.searchParams.set(name, value);
  url.searchParams.set('iss', issuer);
  return url.toString();
}

/** The error redirect for an {@link AuthorizationError} that may go back to the client. */
export function authorizationErrorUrl(error: AuthorizationError, issuer: string): string | undefined {
  if (error.redirectUri === undefined) return undefined;
  return authorizationResponseUrl(error.redirectUri, issuer, {
    error: error.code,
    error_description: error.description,
    state: error.state,
  });
}
