import type { SigningKeyInfo } from '@idgate/schema';
import { adminActor } from '../audit/admin.js';
import { originFields, recordAuditEvent } from '../audit/record.js';
import { rotateSigningKey } from '../keys/rotation.js';
import { signingKeyPhases } from '../keys/signing-key.js';
import { type AdminPorts, nowOf } from './ports.js';
import { signingKeyView } from './views.js';

/**
 * Every signing key, newest first, with its phase now (`next`, `active`, `retired`, `expired`;
 * see {@link signingKeyPhases}), never private material.
 * @example const keys = await listSigningKeys(ports); // [{ kid, alg, state: 'next', ... }, { state: 'active', ... }]
 */
export async function listSigningKeys(
  ports: Pick<AdminPorts, 'storage' | 'clock'> & {
    keyPolicy?: Pick<AdminPorts['keyPolicy'], 'activationDelaySeconds'>;
  },
): Promise<SigningKeyInfo[]> {
  const now = nowOf(ports);
  const keys = await ports.storage.signingKeys.list();
  const phases = signingKeyPhases(keys, now, ports.keyPolicy?.activationDelaySeconds ?? 0);
  return keys.map((key) => signingKeyView(key, now, phases.get(key.kid)));
}

/**
 * Rotates the signing keys now ({@link rotateSigningKey}): a new key is published at once and
 * signs after the policy's activation delay; the keys active until then are retired and stay
 * published until their last token has expired. Runs alone (`lockSigningKeys`): a failure halfway
 * cannot leave the new key stored beside an unretired old one, and two rotations run one after
 * the other.
 * @example const { created, retired } = await rotateSigningKeys(ports);
 */
export async function rotateSigningKeys(
  ports: Pick<
    AdminPorts,
    'storage' | 'clock' | 'keyPolicy' | 'lockSigningKeys' | 'auditActor' | 'auditOrigin' | 'auditIds'
  >,
): Promise<{ created: SigningKeyInfo; retired: string[] }> {
  const now = nowOf(ports);
  const lock = ports.lockSigningKeys ?? ((work) => ports.storage.transaction(work));
  const actor = adminActor(ports);
  const { created, retired } = await lock(async (tx) => {
    const rotation = await rotateSigningKey(tx.signingKeys, ports.keyPolicy, now);
    const activeFrom = new Date(now.getTime() + (ports.keyPolicy.activationDelaySeconds ?? 0) * 1000);
    await recordAuditEvent(
      tx,
      {
        type: 'key.rotated',
        actor,
        ...originFields(ports.auditOrigin),
        details: {
          kid: rotation.created.kid,
          algorithm: rotation.created.alg,
          retired: rotation.retired,
          activeFrom: activeFrom.toISOString(),
          trigger: actor.kind === 'cli' ? 'cli' : actor.kind === 'system' ? 'automatic' : 'admin',
        },
      },
      ports.clock,
      ports.auditIds,
    );
    return rotation;
  });
  const phases = signingKeyPhases(
    await ports.storage.signingKeys.list(),
    now,
    ports.keyPolicy.activationDelaySeconds ?? 0,
  );
  return { created: signingKeyView(created, now, phases.get(created.kid)), retired };
}
