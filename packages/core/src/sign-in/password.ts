import { type AuditEventDraft, type AuditEventIds, originFields, recordAuditEvent } from '../audit/record.js';
import type { ExternalPasswordCheck } from '../grants/context.js';
import type { GrantUpstream, UserRecord } from '../model.js';
import type { AuditEventRepository } from '../ports/audit-storage.js';
import type { RequestLog } from '../ports/caller.js';
import type { Clock } from '../ports/runtime.js';
import type { LoginThrottle, ThrottleDecision } from '../security/login-throttle.js';
import { type PasswordLoginContext, verifyUserPassword } from '../users/authenticate.js';

/** Why a password sign-in was refused. */
export type PasswordSignInFailure =
  | 'invalid_credentials'
  | 'disabled'
  | 'not_linked'
  | 'locked'
  | 'unknown_provider';

/** A username and password, typed on the login page or sent with the password grant. */
export interface PasswordSignInRequest {
  username: string;
  password: string;
  /** A password provider (LDAP) by name; absent for a local account. */
  provider?: string | undefined;
  /** The caller's address, for the login records. */
  sourceAddress: string;
  /**
   * The client of a password grant; absent for the login page. A grant's failures are counted per
   * client and per address apart from the browser's, so a client's server calling on its users'
   * behalf neither spends nor is blocked by the login page's per-address allowance.
   */
  clientId?: string | undefined;
  /** The caller's user agent, for the audit trail. */
  userAgent?: string | undefined;
  /** The request's id and OpenTelemetry trace id, for the audit trail. */
  requestId?: string | undefined;
  traceId?: string | undefined;
  /**
   * The client the sign-in is for, for the audit trail: the application of the login page's
   * authorization request or device approval (a password grant's is `clientId`). Unlike
   * `clientId`, it changes nothing of how failures are counted.
   */
  forClient?: string | undefined;
  /** Hears why a directory refused the sign-in or could not be reached (never the password). */
  log?: RequestLog | undefined;
  /** Where the sign-in came from; by default the password grant with a client, else the browser. */
  channel?: 'browser' | 'password-grant' | 'cli' | undefined;
}

/** What {@link signInWithPassword} needs. */
export interface PasswordSignInContext {
  passwords: PasswordLoginContext;
  /** The check of an enabled password provider called `name`, or undefined when there is none. */
  externalPasswords?:
    | ((name: string, log?: RequestLog) => Promise<ExternalPasswordCheck | undefined>)
    | undefined;
  throttle?: LoginThrottle | undefined;
  /** Where the sign-in's audit events go (`sign-in.succeeded`, `.failed`, `.locked`); none without. */
  audit?: { events: AuditEventRepository; clock: Clock; ids?: AuditEventIds } | undefined;
}

/** The outcome of {@link signInWithPassword}. */
export type PasswordSignIn =
  | { ok: true; user: UserRecord; upstream?: GrantUpstream | undefined }
  | { ok: false; failure: Exclude<PasswordSignInFailure, 'locked'> }
  | { ok: false; failure: 'locked'; retryAfterSeconds: number; scope: 'account' | 'address' | 'client' };

/**
 * Password sign-in, the one sequence behind the login page and the password grant: refuse a
 * locked account (or address) before the password is even checked, check the password locally or
 * at the named provider, and record the attempt either way, so that every path counts toward the
 * same lock. A provider that cannot be reached throws (`temporarily_unavailable`): that is no
 * wrong password, and is not recorded as one.
 * @example
 * const result = await signInWithPassword(
 *   { username: 'alice', password, sourceAddress: request.ip },
 *   context,
 * );
 */
export async function signInWithPassword(
  request: PasswordSignInRequest,
  context: PasswordSignInContext,
): Promise<PasswordSignIn> {
  const provider = request.provider?.toLowerCase();
  let check: ExternalPasswordCheck = (username, password) =>
    verifyUserPassword(username, password, context.passwords);
  if (provider !== undefined) {
    const external = await context.externalPasswords?.(provider, request.log);
    if (external === undefined) {
      await recordSignIn(request, context, {
        type: 'sign-in.failed',
        userId: null,
        reason: 'unknown_provider',
        provider,
      });
      return { ok: false, failure: 'unknown_provider' };
    }
    check = external;
  }
  const attempt = {
    username: request.username,
    sourceAddress: request.sourceAddress,
    provider: provider ?? 'password',
    ...(request.clientId === undefined ? {} : { clientId: request.clientId }),
  };
  const origin = {
    provider: attempt.provider,
    ...(request.clientId === undefined ? {} : { clientId: request.clientId }),
  };
  const decision = await context.throttle?.check(request.username, request.sourceAddress, origin);
  const audit = (
    type: 'sign-in.succeeded' | 'sign-in.failed' | 'sign-in.locked',
    userId: string | null,
    reason: string | null,
    groupsDropped: number | null = null,
  ) =>
    recordSignIn(request, context, {
      type,
      userId,
      reason,
      provider: attempt.provider,
      groupsDropped,
      // A provider's check (an LDAP bind) came back: an upstream sign-in, as a callback is.
      upstream: provider !== undefined && type !== 'sign-in.locked',
    });
  if (decision?.locked) {
    // Who was refused, for the trail: a local account by its name (a directory's is known only
    // once its bind succeeds, which a lock never tries).
    const userId =
      provider === undefined
        ? ((await context.passwords.findUserByUsername(request.username))?.id ?? null)
        : null;
    await context.throttle?.record({ ...attempt, userId, success: false, reason: 'locked' });
    await audit('sign-in.locked', userId, decision.scope);
    return {
      ok: false,
      failure: 'locked',
      retryAfterSeconds: decision.retryAfterSeconds,
      scope: decision.scope,
    };
  }
  const login = await check(request.username, request.password);
  if (!login.ok) {
    const userId = login.userId ?? null;
    await context.throttle?.record({ ...attempt, userId, success: false, reason: login.failure });
    await audit('sign-in.failed', userId, login.failure);
    // This failure may be the one that starts a lockout: tell the trail when it does.
    const after = await context.throttle?.check(request.username, request.sourceAddress, origin);
    if (after?.locked) await recordLockout(request, context, attempt.provider, userId, after);
    return { ok: false, failure: login.failure };
  }
  await context.throttle?.record({ ...attempt, userId: login.user.id, success: true, reason: null });
  await audit('sign-in.succeeded', login.user.id, null, login.groupsDropped ?? null);
  return {
    ok: true,
    user: login.user,
    ...(login.upstream === undefined ? {} : { upstream: login.upstream }),
  };
}

/** Where a password sign-in's events come from: the request's origin. */
function signInOrigin(request: PasswordSignInRequest) {
  return originFields({
    address: request.sourceAddress,
    userAgent: request.userAgent,
    requestId: request.requestId,
    traceId: request.traceId,
  });
}

/**
 * The `lockout.started` event of the failure that started a lockout: acted by idgate, about the
 * account's user (an account lockout), the client (a client's), or the address alone.
 */
async function recordLockout(
  request: PasswordSignInRequest,
  context: PasswordSignInContext,
  provider: string,
  userId: string | null,
  lock: Extract<ThrottleDecision, { locked: true }>,
): Promise<void> {
  if (context.audit === undefined) return;
  await recordAuditEvent(
    { auditEvents: context.audit.events },
    {
      type: 'lockout.started',
      actor: { kind: 'system', id: null },
      subject: lock.scope === 'account' ? userId : null,
      clientId: request.clientId ?? request.forClient ?? null,
      ...signInOrigin(request),
      outcome: 'failure',
      details: {
        scope: lock.scope,
        provider,
        username: request.username.toLowerCase(),
        lockedUntil: lock.until.toISOString(),
      },
    },
    context.audit.clock,
    context.audit.ids,
  );
}

/**
 * The audit events of a password sign-in: `sign-in.*`, after an `upstream.sign-in` when a
 * provider checked the password (never the password itself). Written beside the login record, not
 * in one transaction with it: the throttle writes its record through its own repository
 * (instrumented on the server), and a sign-in changes nothing else that an event could be lost beside.
 */
async function recordSignIn(
  request: PasswordSignInRequest,
  context: PasswordSignInContext,
  outcome: {
    type: 'sign-in.succeeded' | 'sign-in.failed' | 'sign-in.locked';
    userId: string | null;
    reason: string | null;
    provider: string;
    groupsDropped?: number | null;
    /** Whether a provider (not the local accounts) checked the password: then `upstream.sign-in` too. */
    upstream?: boolean;
  },
): Promise<void> {
  if (context.audit === undefined) return;
  const username = request.username.toLowerCase();
  const succeeded = outcome.type === 'sign-in.succeeded';
  const envelope = {
    // Someone who signed in acts as their user; a refusal names the user only as its subject.
    actor: { kind: 'user' as const, id: succeeded ? outcome.userId : null, name: username },
    subject: outcome.userId,
    clientId: request.clientId ?? request.forClient ?? null,
    ...signInOrigin(request),
    outcome: succeeded ? ('success' as const) : ('failure' as const),
  };
  const events: AuditEventDraft[] = [
    {
      ...envelope,
      type: outcome.type,
      details: {
        method: request.provider === undefined ? 'password' : 'ldap',
        provider: outcome.provider,
        channel: request.channel ?? (request.clientId === undefined ? 'browser' : 'password-grant'),
        username,
        reason: outcome.reason,
        groupsDropped: outcome.groupsDropped ?? null,
      },
    },
  ];
  if (outcome.upstream === true) {
    events.unshift({
      ...envelope,
      type: 'upstream.sign-in',
      details: { provider: outcome.provider, reason: outcome.reason },
    });
  }
  await recordAuditEvent(
    { auditEvents: context.audit.events },
    events,
    context.audit.clock,
    context.audit.ids,
  );
}
