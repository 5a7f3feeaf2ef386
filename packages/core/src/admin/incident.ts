import {
  type BlockedAddress,
  type NotBefore,
  SetNotBeforeInput,
  type SigningKeyRetirement,
  SourceAddress,
} from '@idgate/schema';
import { adminActor } from '../audit/admin.js';
import { originFields, recordAuditEvent } from '../audit/record.js';
import { generateSigningKey, signingKeyPhases } from '../keys/signing-key.js';
import type { NotBeforeRecord } from '../model.js';
import { DEFAULT_LOGIN_THROTTLE, LoginThrottle } from '../security/login-throttle.js';
import { AdminError, parseAdminInput } from './errors.js';
import { type AdminPorts, nowOf } from './ports.js';
import { findUser } from './users.js';
import { signingKeyView } from './views.js';

/** How far ahead of the server's clock a not-before may be asked for (another machine's clock). */
export const NOT_BEFORE_CLOCK_SKEW_SECONDS = 60;

type KeyPorts = Pick<
  AdminPorts,
  'storage' | 'clock' | 'keyPolicy' | 'lockSigningKeys' | 'auditActor' | 'auditOrigin' | 'auditIds'
>;

/**
 * Retires a signing key at once — incident response, not rotation: it stops signing and leaves
 * JWKS now, so every token it signed stops verifying (rotation keeps a retired key published
 * until its last token has expired). Refused when the key is the only one that may sign, unless
 * `options.rotate` makes a new key in the same step, which then signs at once (whatever the
 * activation delay: there is no other key to sign with). Runs alone (`lockSigningKeys`).
 * @throws AdminError `invalid_input` for a malformed kid; `not_found` for an unknown key or one
 * already out of JWKS; `conflict` (`last_signing_key`) for the only signing key without `rotate`.
 * @example const { retired, created } = await retireSigningKey(ports, kid, { rotate: true });
 */
export async function retireSigningKey(
  ports: KeyPorts,
  kid: string,
  options: { rotate?: boolean } = {},
): Promise<SigningKeyRetirement> {
  if (typeof kid !== 'string' || !/^[A-Za-z0-9_-]{1,128}$/.test(kid))
    throw new AdminError('invalid_input', 'signing_key', 'kid must be 1–128 letters, digits, _ and -');
  const now = nowOf(ports);
  const at = now.getTime();
  const lock = ports.lockSigningKeys ?? ((work) => ports.storage.transaction(work));
  const actor = adminActor(ports);
  const notFound = () =>
    new AdminError('not_found', 'signing_key', `no signing key ${kid} in JWKS`, { key: kid });
  const created = await lock(async (tx) => {
    const keys = await tx.signingKeys.list();
    const key = keys.find((k) => k.kid === kid);
    if (key === undefined) throw notFound();
    const published = key.publishedUntil === null || key.publishedUntil.getTime() > at;
    if (!published || (key.retiredAt !== null && key.publishedUntil === null)) throw notFound();
    const othersSigning = keys.filter(
      (k) => k.kid !== kid && (k.retiredAt === null || k.retiredAt.getTime() > at),
    );
    let made = null;
    if (options.rotate === true || othersSigning.length === 0) {
      if (options.rotate !== true)
        throw new AdminError(
          'conflict',
          'signing_key',
          `${kid} is the only key that may sign: retire it with a new key made in the same step (rotate)`,
          { key: kid, problem: 'last_signing_key' },
        );
      made = await generateSigningKey(ports.keyPolicy.alg, ports.keyPolicy.secret, now);
      await tx.signingKeys.insert(made);
    }
    if (!(await tx.signingKeys.withdraw(kid, now))) throw notFound();
    await recordAuditEvent(
      tx,
      {
        type: 'key.retired',
        actor,
        ...originFields(ports.auditOrigin),
        details: {
          kid,
          algorithm: key.alg,
          created: made?.kid ?? null,
          trigger: actor.kind === 'cli' ? 'cli' : 'admin',
        },
      },
      ports.clock,
      ports.auditIds,
    );
    return made;
  });
  const keys = await ports.storage.signingKeys.list();
  const phases = signingKeyPhases(keys, now, ports.keyPolicy.activationDelaySeconds ?? 0);
  const view = (k: string) => {
    const record = keys.find((candidate) => candidate.kid === k);
    if (record === undefined) throw notFound();
    return signingKeyView(record, now, phases.get(k));
  };
  return { retired: view(kid), created: created === null ? null : view(created.kid) };
}

type NotBeforePorts = Pick<AdminPorts, 'storage' | 'clock' | 'auditActor' | 'auditOrigin' | 'auditIds'>;

function notBeforeView(record: NotBeforeRecord): NotBefore {
  return {
    scope: record.scope,
    subject: record.scope === 'global' ? null : record.subject,
    notBefore: record.notBefore.toISOString(),
    setAt: record.setAt.toISOString(),
  };
}

/**
 * Revokes everything of a scope issued before an instant (Keycloak's not-before): every token
 * (`global`), a client's or a user's. Access tokens and ID tokens (as `id_token_hint`) whose
 * `iat` is before it, and grants (their refresh tokens), browser sessions and authorization codes
 * made before it are refused everywhere: token review, introspection, userinfo, refresh, logout.
 * The instant defaults to now; one more than {@link NOT_BEFORE_CLOCK_SKEW_SECONDS} ahead is
 * refused, and one ahead within it is stored as now (a not-before never refuses what is issued
 * after it was set). A later instant set before stays: a not-before is only ever raised.
 * @param input as sent (checked with `SetNotBeforeInput`).
 * @throws AdminError `invalid_input` (`invalid_not_before`) naming the first problem; `not_found`
 * for an unknown client or user.
 * @example const inForce = await setNotBefore(ports, { scope: 'user', subject: 'alice' });
 */
export async function setNotBefore(ports: NotBeforePorts, input: unknown): Promise<NotBefore> {
  const parsed = parseAdminInput(SetNotBeforeInput, input, 'not_before');
  const now = nowOf(ports);
  const asked = parsed.before === undefined ? now : new Date(parsed.before);
  if (asked.getTime() > now.getTime() + NOT_BEFORE_CLOCK_SKEW_SECONDS * 1000)
    throw new AdminError(
      'invalid_input',
      'not_before',
      `before "${parsed.before}": must not be later than now (give no instant for now)`,
    );
  const notBefore = asked.getTime() > now.getTime() ? now : asked;
  let subject = '';
  let userId: string | null = null;
  let clientId: string | null = null;
  if (parsed.scope === 'user') {
    userId = (await findUser(ports.storage, parsed.subject as string)).id;
    subject = userId;
  } else if (parsed.scope === 'client') {
    const id = parsed.subject as string;
    if ((await ports.storage.clients.findById(id)) === undefined)
      throw new AdminError('not_found', 'client', `no client ${id}`, { key: id });
    clientId = id;
    subject = id;
  }
  const record = await ports.storage.transaction(async (tx) => {
    const inForce = await tx.notBefore.raise({ scope: parsed.scope, subject, notBefore, setAt: now });
    await recordAuditEvent(
      tx,
      {
        type: 'tokens.revoked-before',
        actor: adminActor(ports),
        subject: userId,
        clientId,
        ...originFields(ports.auditOrigin),
        details: {
          scope: parsed.scope,
          notBefore: notBefore.toISOString(),
          inForce: inForce.notBefore.toISOString(),
        },
      },
      ports.clock,
      ports.auditIds,
    );
    return inForce;
  });
  return notBeforeView(record);
}

/**
 * Every not-before in force, global first, then clients', then users'.
 * @example const all = await listNotBefore(ports);
 */
export async function listNotBefore(ports: Pick<AdminPorts, 'storage'>): Promise<NotBefore[]> {
  return (await ports.storage.notBefore.list()).map(notBeforeView);
}

type ThrottlePorts = Pick<
  AdminPorts,
  'storage' | 'clock' | 'loginThrottle' | 'auditActor' | 'auditOrigin' | 'auditIds'
>;

const throttleOf = (ports: ThrottlePorts, storage = ports.storage) =>
  new LoginThrottle(storage.loginAttempts, ports.loginThrottle ?? DEFAULT_LOGIN_THROTTLE, ports.clock);

/**
 * The source addresses sign-ins are refused from now (`bruteForce.maxFailuresPerAddress`), the
 * browser's pages and the password grant apart, most failures first (at most 500).
 * @example const blocked = await listBlockedAddresses(ports);
 */
export async function listBlockedAddresses(ports: ThrottlePorts): Promise<BlockedAddress[]> {
  return (await throttleOf(ports).blockedAddresses()).map((b) => ({
    address: b.address,
    channel: b.channel,
    failures: b.failures,
    blockedUntil: b.until.toISOString(),
  }));
}

/**
 * Lifts the block of one source address (`address`), or of every address (`undefined`; the
 * count of wrong device user codes from all addresses together restarts too), on every replica at
 * once: the failures before the lift stay on record and no longer count. Accounts stay locked
 * (`unlockUser` unlocks them).
 * @returns the addresses that were blocked.
 * @throws AdminError `invalid_input` (`invalid_address`) for what is not an IP address.
 * @example const { lifted } = await liftAddressBlocks(ports, '203.0.113.7');
 */
export async function liftAddressBlocks(
  ports: ThrottlePorts,
  address: string | undefined,
): Promise<{ lifted: string[] }> {
  const checked = address === undefined ? undefined : parseAdminInput(SourceAddress, address, 'address');
  const blocked = await throttleOf(ports).blockedAddresses();
  const lifted = [
    ...new Set(blocked.map((b) => b.address).filter((a) => checked === undefined || a === checked)),
  ];
  await ports.storage.transaction(async (tx) => {
    await throttleOf(ports, tx).liftAddressBlock(checked);
    await recordAuditEvent(
      tx,
      {
        type: 'address.unblocked',
        actor: adminActor(ports),
        ...originFields(ports.auditOrigin),
        details: { all: checked === undefined, addresses: checked === undefined ? lifted : [checked] },
      },
      ports.clock,
      ports.auditIds,
    );
  });
  return { lifted };
}
