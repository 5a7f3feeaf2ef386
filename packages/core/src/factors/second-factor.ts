import {
  type AuditEventDraft,
  type AuditEventIds,
  originFields,
  type RequestOrigin,
  recordAuditEvent,
} from '../audit/record.js';
import { openText, sealText } from '../keys/seal.js';
import type { FactorRecord, UserRecord } from '../model.js';
import { type Clock, type Random, webCryptoRandom } from '../ports/runtime.js';
import { type Storage, StorageConflictError } from '../ports/storage.js';
import type { LoginThrottle } from '../security/login-throttle.js';
import { type AuthenticationMethod, amrOf } from './assurance.js';
import { newRecoveryCodes, normalizeRecoveryCode, recoveryCodeHash } from './recovery-codes.js';
import { base32Decode, base32Encode, matchTotp, totpUri } from './totp.js';

/** What the second-factor use cases read and write. */
export interface SecondFactorContext {
  storage: Pick<Storage, 'factors' | 'auditEvents' | 'transaction'>;
  clock: Clock;
  random?: Random;
  /** The server secret TOTP keys are sealed with (see `sealText`). */
  secret: string;
  /** The issuer name shown in authenticator apps. */
  productName: string;
  /** Counts wrong codes as failed sign-ins of the account `second-factor` (see {@link SECOND_FACTOR_PROVIDER}). */
  throttle?: LoginThrottle | undefined;
  auditIds?: AuditEventIds;
}

/**
 * The provider wrong second-factor codes are recorded under among the login attempts: a user's
 * codes are an account of their own, so a correct password does not reset their count.
 */
export const SECOND_FACTOR_PROVIDER = 'second-factor';

/** The longest factor name, in characters. */
export const FACTOR_NAME_LIMIT = 64;

const sealContext = (factor: Pick<FactorRecord, 'userId' | 'id'>) => `factor:${factor.userId}:${factor.id}`;

/** A TOTP enrolment waiting for its first code: what the account page shows once. */
export interface TotpEnrolment {
  factorId: string;
  /** The key in base32, for typing into an app by hand. */
  secret: string;
  /** The `otpauth://` URI the QR code holds. */
  uri: string;
}

/**
 * Starts enrolling a TOTP authenticator named `name`: a fresh 160-bit key, stored sealed and
 * unconfirmed (it does not count for sign-in until {@link confirmTotpEnrolment}). An unconfirmed
 * enrolment of the same name is replaced.
 * @throws StorageConflictError (`name`) when a confirmed factor has that name.
 * @example const { uri, secret } = await startTotpEnrolment(user, 'phone', context);
 */
export async function startTotpEnrolment(
  user: UserRecord,
  name: string,
  context: SecondFactorContext,
): Promise<TotpEnrolment> {
  if (name.length === 0 || name.length > FACTOR_NAME_LIMIT)
    throw new RangeError(`a factor name has 1 to ${FACTOR_NAME_LIMIT} characters`);
  const random = context.random ?? webCryptoRandom;
  const key = random.bytes(20);
  const id = crypto.randomUUID();
  const secret = base32Encode(key);
  const existing = (await context.storage.factors.list(user.id)).find((f) => f.name === name);
  if (existing !== undefined) {
    if (existing.confirmedAt !== null) throw new StorageConflictError('name');
    await context.storage.factors.remove(user.id, existing.id);
  }
  await context.storage.factors.create({
    id,
    userId: user.id,
    kind: 'totp',
    name,
    sealedSecret: await sealText(secret, context.secret, sealContext({ userId: user.id, id }), random),
    lastUsedStep: null,
    credentialId: null,
    transports: null,
    createdAt: new Date(context.clock.now()),
    confirmedAt: null,
    lastUsedAt: null,
  });
  return { factorId: id, secret, uri: totpUri(context.productName, user.username, secret) };
}

async function totpKey(factor: FactorRecord, secret: string): Promise<Uint8Array> {
  return base32Decode(await openText(factor.sealedSecret, secret, sealContext(factor)));
}

const userActor = (user: UserRecord) => ({ kind: 'user' as const, id: user.id, name: user.username });

/**
 * Confirms a TOTP enrolment with a code from the app; the first factor of a user also gets a set
 * of recovery codes, returned here and never again.
 * @example const done = await confirmTotpEnrolment(user, factorId, '123456', origin, context);
 */
export async function confirmTotpEnrolment(
  user: UserRecord,
  factorId: string,
  code: string,
  origin: RequestOrigin,
  context: SecondFactorContext,
): Promise<{ ok: true; recoveryCodes: string[] | null } | { ok: false }> {
  const { storage, clock } = context;
  const factor = await storage.factors.findById(user.id, factorId);
  if (factor === undefined || factor.confirmedAt !== null) return { ok: false };
  const now = clock.now();
  const step = matchTotp(await totpKey(factor, context.secret), code, now, null);
  if (step === undefined) return { ok: false };
  return storage.transaction(async (tx) => {
    if (!(await tx.factors.confirm(user.id, factorId, step, new Date(now)))) return { ok: false as const };
    const events: AuditEventDraft[] = [
      {
        type: 'factor.enrolled',
        actor: userActor(user),
        subject: user.id,
        ...originFields(origin),
        details: { factorId, kind: factor.kind, name: factor.name },
      },
    ];
    let recoveryCodes: string[] | null = null;
    if ((await tx.factors.recoveryCodesLeft(user.id)) === 0) {
      recoveryCodes = newRecoveryCodes(context.random);
      await tx.factors.replaceRecoveryCodes(user.id, recoveryCodes.map(recoveryCodeHash), new Date(now));
      events.push(generatedEvent(user, userActor(user), recoveryCodes.length, origin));
    }
    await recordAuditEvent(tx, events, clock, context.auditIds);
    return { ok: true as const, recoveryCodes };
  });
}

function generatedEvent(
  user: UserRecord,
  actor: AuditEventDraft['actor'],
  count: number,
  origin: RequestOrigin,
): AuditEventDraft {
  return {
    type: 'recovery-codes.generated',
    actor,
    subject: user.id,
    ...originFields(origin),
    details: { count },
  };
}

/**
 * Replaces the user's recovery codes with a new set; the old ones stop working at once.
 * @example const codes = await regenerateRecoveryCodes(user, origin, context);
 */
export async function regenerateRecoveryCodes(
  user: UserRecord,
  origin: RequestOrigin,
  context: SecondFactorContext,
): Promise<string[]> {
  const codes = newRecoveryCodes(context.random);
  await context.storage.transaction(async (tx) => {
    await tx.factors.replaceRecoveryCodes(
      user.id,
      codes.map(recoveryCodeHash),
      new Date(context.clock.now()),
    );
    await recordAuditEvent(
      tx,
      generatedEvent(user, userActor(user), codes.length, origin),
      context.clock,
      context.auditIds,
    );
  });
  return codes;
}

/** Whether a user must give a second factor after the password, and whether they can. */
export interface SecondFactorNeed {
  /** The user has at least one confirmed factor. */
  enrolled: boolean;
  /** An administrator requires a second factor of the user, or of a group of theirs. */
  required: boolean;
  /** The user's groups that require a second factor (`requireMfa`), in the user's order. */
  groups: string[];
}

/**
 * Whether `user` has a confirmed second factor, and whether one is required of them: of the user
 * (an administrator's requirement), or of one of `groups` (the user's groups) whose `requireMfa`
 * is set.
 * @example const { enrolled } = await secondFactorNeed(user.id, storage, user.groups);
 */
export async function secondFactorNeed(
  userId: string,
  storage: {
    factors: Pick<Storage['factors'], 'list' | 'isRequired'>;
    groups?: Pick<Storage['groups'], 'find'>;
  },
  groups: readonly string[] = [],
): Promise<SecondFactorNeed> {
  const [factors, required, found] = await Promise.all([
    storage.factors.list(userId),
    storage.factors.isRequired(userId),
    Promise.all(groups.map((name) => storage.groups?.find(name))),
  ]);
  const requiring = found.filter((group) => group?.requireMfa === true).map((group) => group?.name as string);
  return {
    enrolled: factors.some((f) => f.confirmedAt !== null),
    required: required || requiring.length > 0,
    groups: requiring,
  };
}

/** The outcome of a second-factor check at sign-in. */
export type SecondFactorCheck =
  | { ok: true; method: 'totp' | 'recovery'; amr: string[] }
  | { ok: false; failure: 'invalid_code' }
  | { ok: false; failure: 'locked'; retryAfterSeconds: number };

/**
 * Checks the code typed after the password: a TOTP code of one of the user's confirmed factors
 * (each time step once: a replayed code is refused), or an unused recovery code (then used up).
 * Wrong codes count toward the throttle's account lock for `second-factor`. Records
 * `factor.used` / `recovery-code.used` or `factor.failed`.
 * @example const check = await verifySecondFactor(user, form.code, ['pwd'], origin, context);
 */
export async function verifySecondFactor(
  user: UserRecord,
  code: string,
  firstMethods: readonly AuthenticationMethod[],
  origin: RequestOrigin & { address: string },
  context: SecondFactorContext,
): Promise<SecondFactorCheck> {
  const { storage, clock, throttle } = context;
  const attempt = {
    username: user.username,
    userId: user.id,
    sourceAddress: origin.address,
    provider: SECOND_FACTOR_PROVIDER,
  };
  const decision = await throttle?.check(user.username, origin.address, { provider: SECOND_FACTOR_PROVIDER });
  const fail = async (reason: 'invalid_code' | 'locked') => {
    await recordAuditEvent(
      storage,
      {
        type: 'factor.failed',
        actor: userActor(user),
        subject: user.id,
        ...originFields(origin),
        outcome: 'failure',
        details: { reason },
      },
      clock,
      context.auditIds,
    );
    await throttle?.record({ ...attempt, success: false, reason });
  };
  if (decision?.locked === true) {
    await fail('locked');
    return { ok: false, failure: 'locked', retryAfterSeconds: decision.retryAfterSeconds };
  }
  const now = clock.now();
  const at = new Date(now);
  const amr = amrOf([...firstMethods, 'otp']);
  const typed = code.trim();
  if (/^\d[\d\s]*$/.test(typed)) {
    for (const factor of await storage.factors.list(user.id)) {
      if (factor.confirmedAt === null || factor.kind !== 'totp') continue;
      const step = matchTotp(await totpKey(factor, context.secret), typed, now, factor.lastUsedStep);
      if (step === undefined) continue;
      // Compare-and-set: of two requests with one code, one wins.
      if (!(await storage.factors.useStep(user.id, factor.id, step, at))) break;
      await recordAuditEvent(
        storage,
        {
          type: 'factor.used',
          actor: userActor(user),
          subject: user.id,
          ...originFields(origin),
          details: { factorId: factor.id, kind: factor.kind },
        },
        clock,
        context.auditIds,
      );
      await throttle?.record({ ...attempt, success: true, reason: null });
      return { ok: true, method: 'totp', amr };
    }
  } else if (normalizeRecoveryCode(typed).length === 16) {
    const used = await storage.transaction(async (tx) => {
      if (!(await tx.factors.useRecoveryCode(user.id, recoveryCodeHash(typed), at))) return false;
      const left = await tx.factors.recoveryCodesLeft(user.id);
      await recordAuditEvent(
        tx,
        {
          type: 'recovery-code.used',
          actor: userActor(user),
          subject: user.id,
          ...originFields(origin),
          details: { left },
        },
        clock,
        context.auditIds,
      );
      return true;
    });
    if (used) {
      await throttle?.record({ ...attempt, success: true, reason: null });
      return { ok: true, method: 'recovery', amr };
    }
  }
  await fail('invalid_code');
  return { ok: false, failure: 'invalid_code' };
}

/** A factor as shown to its user and to administrators: never its secret. */
export interface FactorView {
  id: string;
  kind: FactorRecord['kind'];
  name: string;
  createdAt: Date;
  lastUsedAt: Date | null;
}

/**
 * The user's confirmed factors, without secrets.
 * @example const factors = await listFactors(user.id, storage);
 */
export async function listFactors(userId: string, storage: Pick<Storage, 'factors'>): Promise<FactorView[]> {
  return (await storage.factors.list(userId))
    .filter((f) => f.confirmedAt !== null)
    .map((f) => ({ id: f.id, kind: f.kind, name: f.name, createdAt: f.createdAt, lastUsedAt: f.lastUsedAt }));
}

/**
 * Removes one factor (`factorId`), or every factor and recovery code of the user (undefined),
 * recording `factor.removed` with `actor`; how many factors went.
 * @example await removeFactors(user, factorId, { kind: 'api-key', id: key.id }, origin, context);
 */
export async function removeFactors(
  user: UserRecord,
  factorId: string | undefined,
  actor: AuditEventDraft['actor'],
  origin: RequestOrigin,
  context: Pick<SecondFactorContext, 'storage' | 'clock' | 'auditIds'>,
): Promise<number> {
  return context.storage.transaction(async (tx) => {
    const removed =
      factorId === undefined
        ? await tx.factors.removeAll(user.id)
        : (await tx.factors.remove(user.id, factorId))
          ? 1
          : 0;
    if (factorId === undefined || removed > 0) {
      await recordAuditEvent(
        tx,
        {
          type: 'factor.removed',
          actor,
          subject: user.id,
          ...originFields(origin),
          details: { factorId: factorId ?? null, removed },
        },
        context.clock,
        context.auditIds,
      );
    }
    return removed;
  });
}

/**
 * Requires (or stops requiring) a second factor of the user, recording `mfa.required`.
 * @example await requireSecondFactor(user, true, actor, {}, context);
 */
export async function requireSecondFactor(
  user: UserRecord,
  required: boolean,
  actor: AuditEventDraft['actor'],
  origin: RequestOrigin,
  context: Pick<SecondFactorContext, 'storage' | 'clock' | 'auditIds'>,
): Promise<void> {
  await context.storage.transaction(async (tx) => {
    await tx.factors.setRequired(user.id, required, new Date(context.clock.now()));
    await recordAuditEvent(
      tx,
      { type: 'mfa.required', actor, subject: user.id, ...originFields(origin), details: { required } },
      context.clock,
      context.auditIds,
    );
  });
}
