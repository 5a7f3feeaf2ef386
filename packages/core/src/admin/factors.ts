import type { UserFactors } from '@idgate/schema';
import { adminActor } from '../audit/admin.js';
import { listFactors, removeFactors, requireSecondFactor } from '../factors/second-factor.js';
import { AdminError } from './errors.js';
import type { AdminPorts } from './ports.js';
import { findUser } from './users.js';

type FactorPorts = Pick<AdminPorts, 'storage' | 'clock' | 'auditIds' | 'auditActor' | 'auditOrigin'>;

const context = (ports: FactorPorts) => ({
  storage: ports.storage,
  clock: ports.clock,
  ...(ports.auditIds === undefined ? {} : { auditIds: ports.auditIds }),
});

/**
 * A user's second factors as administrators see them (never a secret), the recovery codes left,
 * and whether a second factor is required of them.
 * @throws AdminError `not_found` for an unknown user.
 * @example const { factors } = await listUserFactors(ports, 'alice');
 */
export async function listUserFactors(
  ports: Pick<AdminPorts, 'storage'>,
  username: string,
): Promise<UserFactors> {
  const user = await findUser(ports.storage, username);
  const [factors, required, left] = await Promise.all([
    listFactors(user.id, ports.storage),
    ports.storage.factors.isRequired(user.id),
    ports.storage.factors.recoveryCodesLeft(user.id),
  ]);
  return {
    username: user.username,
    mfaRequired: required,
    recoveryCodesLeft: left,
    factors: factors.map((f) => ({
      id: f.id,
      kind: f.kind,
      name: f.name,
      createdAt: f.createdAt.toISOString(),
      lastUsedAt: f.lastUsedAt?.toISOString() ?? null,
    })),
  };
}

/**
 * Removes one second factor of a user (recording `factor.removed`).
 * @throws AdminError `not_found` for an unknown user, or a factor the user does not have.
 * @example await removeUserFactor(ports, 'alice', factorId);
 */
export async function removeUserFactor(
  ports: FactorPorts,
  username: string,
  factorId: string,
): Promise<void> {
  const user = await findUser(ports.storage, username);
  const removed = await removeFactors(
    user,
    factorId,
    adminActor(ports),
    ports.auditOrigin ?? {},
    context(ports),
  );
  if (removed === 0)
    throw new AdminError('not_found', 'factor', `user ${user.username} has no second factor ${factorId}`, {
      key: factorId,
    });
}

/**
 * Removes every second factor and recovery code of a user — what to do for someone who lost them
 * all, once they proved who they are some other way; their next sign-in is with the password alone
 * (or enrols a factor again, when one is required). Records `factor.removed`.
 * @throws AdminError `not_found` for an unknown user.
 * @example const { removed } = await resetUserFactors(ports, 'alice');
 */
export async function resetUserFactors(ports: FactorPorts, username: string): Promise<{ removed: number }> {
  const user = await findUser(ports.storage, username);
  const removed = await removeFactors(
    user,
    undefined,
    adminActor(ports),
    ports.auditOrigin ?? {},
    context(ports),
  );
  return { removed };
}

/**
 * Requires (or stops requiring) a second factor of a user: with one required, the user's next
 * sign-in asks for it, or enrols one first; the password grant refuses them. Records `mfa.required`.
 * @throws AdminError `not_found` for an unknown user.
 * @example await setMfaRequired(ports, 'alice', true);
 */
export async function setMfaRequired(
  ports: FactorPorts,
  username: string,
  required: boolean,
): Promise<UserFactors> {
  const user = await findUser(ports.storage, username);
  await requireSecondFactor(user, required, adminActor(ports), ports.auditOrigin ?? {}, context(ports));
  return listUserFactors(ports, username);
}
