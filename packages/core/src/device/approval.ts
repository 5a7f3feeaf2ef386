import { type AuditEventIds, originFields, type RequestOrigin, recordAuditEvent } from '../audit/record.js';
import type { ClientRecord, DeviceAuthorizationRecord, GrantUpstream, UserRecord } from '../model.js';
import type { Clock } from '../ports/runtime.js';
import type { Storage } from '../ports/storage.js';
import { approvedResources } from '../scopes.js';
import { type LoginThrottle, USER_CODE_ATTEMPT, WRONG_USER_CODE } from '../security/login-throttle.js';
import { normalizeUserCode } from './user-code.js';

/** What the verification page's use cases need. */
export interface DeviceApprovalContext {
  clock: Clock;
  /** The ids of the audit events recorded: the instance's, so they sort as made. */
  auditIds?: AuditEventIds;
  findClient(clientId: string): Promise<ClientRecord | undefined>;
  /** A decision and its `device.approved` / `device.denied` event land in one transaction. */
  storage: Pick<Storage, 'deviceAuthorizations' | 'auditEvents' | 'transaction'>;
  /** Wrong user codes count as failures of the source address and of all together (RFC 8628 §5.1). */
  throttle?: LoginThrottle | undefined;
}

/** A pending device authorization and the client that asked for it. */
export interface PendingDeviceAuthorization {
  ok: true;
  request: DeviceAuthorizationRecord;
  client: ClientRecord;
}

/** Why a device authorization cannot be decided. */
export type DeviceAuthorizationUnavailable =
  /** No live request has this code (mistyped, never issued, or expired). */
  | { ok: false; failure: 'unknown' }
  /** Already approved, denied or used. */
  | { ok: false; failure: 'decided' }
  /**
   * Too many wrong codes: from this address (`address`), or from every address together
   * (`all`, `maxWrongUserCodes`); no code is read until `retryAfterSeconds` have passed.
   */
  | { ok: false; failure: 'locked'; scope: 'address' | 'all'; retryAfterSeconds: number };

async function pendingOrWhy(
  request: DeviceAuthorizationRecord | undefined,
  context: DeviceApprovalContext,
): Promise<PendingDeviceAuthorization | DeviceAuthorizationUnavailable> {
  if (request === undefined || request.expiresAt.getTime() <= context.clock.now()) {
    return { ok: false, failure: 'unknown' };
  }
  if (request.status !== 'pending') return { ok: false, failure: 'decided' };
  const client = await context.findClient(request.clientId);
  if (client === undefined) return { ok: false, failure: 'unknown' };
  return { ok: true, request, client };
}

/** Whether a code from `sourceAddress` may be read now: its address's lock first, then everyone's. */
async function userCodeLock(
  throttle: LoginThrottle,
  sourceAddress: string,
): Promise<{ scope: 'address' | 'all'; retryAfterSeconds: number } | undefined> {
  const address = await throttle.checkAddress(sourceAddress);
  if (address.locked) return { scope: 'address', retryAfterSeconds: address.retryAfterSeconds };
  const all = await throttle.checkWrongUserCodes();
  return all.locked ? { scope: 'all', retryAfterSeconds: all.retryAfterSeconds } : undefined;
}

/**
 * A user code typed on the verification page (RFC 8628 §3.3): case, spaces and dashes do not
 * matter. A wrong code counts against the source address and against the budget of every address
 * together; an address with too many, or the page once all addresses together have too many, is
 * refused for a while without the code being read, so that the 20^8 codes cannot be guessed
 * (RFC 8628 §5.1). A refusal is recorded against its address and as a `device.locked` event.
 * @example
 * const found = await enterUserCode('bcdf-ghjk', request.ip, context);
 * if (found.ok) showConfirmation(found.client, found.request.scope);
 */
export async function enterUserCode(
  input: string,
  sourceAddress: string,
  context: DeviceApprovalContext,
  userAgent?: string | null,
): Promise<PendingDeviceAuthorization | DeviceAuthorizationUnavailable> {
  const throttle = context.throttle;
  const lock = throttle === undefined ? undefined : await userCodeLock(throttle, sourceAddress);
  if (throttle !== undefined && lock !== undefined) {
    await throttle.record({ ...USER_CODE_ATTEMPT, sourceAddress, success: false, reason: 'locked' });
    await recordAuditEvent(
      context.storage,
      {
        type: 'device.locked',
        actor: { kind: 'user', id: null },
        subject: null,
        clientId: null,
        address: sourceAddress,
        userAgent: userAgent ?? null,
        outcome: 'failure',
        details: lock,
      },
      context.clock,
      context.auditIds,
    );
    return { ok: false, failure: 'locked', ...lock };
  }
  const userCode = normalizeUserCode(input);
  const request =
    userCode === undefined
      ? undefined
      : await context.storage.deviceAuthorizations.findLiveByUserCode(
          userCode,
          new Date(context.clock.now()),
        );
  const found = await pendingOrWhy(request, context);
  if (!found.ok && found.failure === 'unknown') {
    await throttle?.record({
      ...USER_CODE_ATTEMPT,
      sourceAddress,
      success: false,
      reason: WRONG_USER_CODE,
    });
  }
  return found;
}

/**
 * The pending device authorization of a device code hash (the verification page keeps the hash
 * while the person signs in, so a user code reissued meanwhile cannot be swapped in).
 * @example const found = await findPendingDeviceAuthorization(hash, context);
 */
export async function findPendingDeviceAuthorization(
  deviceCodeHash: string,
  context: DeviceApprovalContext,
): Promise<PendingDeviceAuthorization | DeviceAuthorizationUnavailable> {
  return pendingOrWhy(
    await context.storage.deviceAuthorizations.findByDeviceCodeHash(deviceCodeHash),
    context,
  );
}

/**
 * Who approves: the signed-in user, when they authenticated, their browser session, and the
 * external identity that session signed in through (handed to the device's grant).
 */
export interface DeviceApprover {
  user: UserRecord;
  authTime: Date;
  sessionId: string | null;
  upstream?: GrantUpstream | null;
  /** How the approver signed in (RFC 8176), handed to the device's grant. */
  amr?: string[] | null;
  /** Where the decision was sent from, for the audit trail. */
  origin?: RequestOrigin | undefined;
}

/** The outcome of an approval or a denial. */
export type DeviceDecisionOutcome = { ok: true } | { ok: false; failure: 'unknown' | 'decided' };

async function decide(
  deviceCodeHash: string,
  approver: DeviceApprover,
  allow: boolean,
  context: DeviceApprovalContext,
): Promise<DeviceDecisionOutcome> {
  const found = await findPendingDeviceAuthorization(deviceCodeHash, context);
  if (!found.ok) return { ok: false, failure: found.failure === 'decided' ? 'decided' : 'unknown' };
  const decision = allow
    ? {
        status: 'approved' as const,
        userId: approver.user.id,
        authTime: approver.authTime,
        sessionId: approver.sessionId,
        upstream: approver.upstream ?? null,
        amr: approver.amr ?? null,
      }
    : { status: 'denied' as const, userId: approver.user.id };
  const { request } = found;
  // What the page named: fixed when the device asked (older requests: the client's audiences).
  const resources = request.resource ?? approvedResources(undefined, found.client) ?? [];
  const moved = await context.storage.transaction(async (tx) => {
    if (!(await tx.deviceAuthorizations.decide(deviceCodeHash, decision, new Date(context.clock.now()))))
      return false;
    await recordAuditEvent(
      tx,
      {
        type: allow ? 'device.approved' : 'device.denied',
        actor: { kind: 'user', id: approver.user.id, name: approver.user.username },
        subject: approver.user.id,
        clientId: request.clientId,
        ...originFields(approver.origin),
        // A denial is the person refusing the device: a failure of the authorization it decides.
        outcome: allow ? 'success' : 'failure',
        details: { scopes: [...request.scope], resources },
      },
      context.clock,
      context.auditIds,
    );
    return true;
  });
  return moved ? { ok: true } : { ok: false, failure: 'decided' };
}

/**
 * Device approval: the signed-in person confirmed, explicitly, that the device may act for them
 * (RFC 8628 §5.4). The device's next poll gets the tokens. Only a pending, unexpired request can
 * be approved, and only once.
 * @example await approveDeviceAuthorization(hash, { user, authTime, sessionId }, context);
 */
export function approveDeviceAuthorization(
  deviceCodeHash: string,
  approver: DeviceApprover,
  context: DeviceApprovalContext,
): Promise<DeviceDecisionOutcome> {
  return decide(deviceCodeHash, approver, true, context);
}

/**
 * Device denial: the person refused; the device's next poll gets `access_denied`.
 * @example await denyDeviceAuthorization(hash, { user, authTime, sessionId }, context);
 */
export function denyDeviceAuthorization(
  deviceCodeHash: string,
  approver: DeviceApprover,
  context: DeviceApprovalContext,
): Promise<DeviceDecisionOutcome> {
  return decide(deviceCodeHash, approver, false, context);
}
