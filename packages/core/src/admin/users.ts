import type { CreateUserInput, UpdateUserInput, UserListQuery } from '@idgate/schema';
import { recordAdminChange, recordObjectChange } from '../audit/admin.js';
import type { LoginAttemptRecord, NewUser, UserRecord } from '../model.js';
import type { Storage, UserPageQuery } from '../ports/storage.js';
import { generatePassword } from '../secrets.js';
import { DEFAULT_LOGIN_THROTTLE, LoginThrottle } from '../security/login-throttle.js';
import { checkPasswordPolicy, DEFAULT_PASSWORD_POLICY } from '../users/password-policy.js';
import { AdminError, refusingConflicts } from './errors.js';
import { checkIfMatch } from './etag.js';
import { decodeCursor, pageFrom } from './page.js';
import { type AdminPorts, nowOf } from './ports.js';
import { endUserAccess, type RevocationPorts } from './revocations.js';
import { userView } from './views.js';

/** How many sign-in attempts {@link listLoginAttempts} shows unless told, and at most. */
export const LOGIN_ATTEMPTS_LIMIT = { default: 20, max: 1000 } as const;

/** The fields of a user an `admin.changed` event shows when they change (never the password hash). */
const AUDITED = ['username', 'email', 'displayName', 'groups', 'disabled'] as const;

/** The password given (checked against the policy), or a generated one (to be shown once). */
function choosePassword(
  ports: Pick<AdminPorts, 'passwordPolicy' | 'random'>,
  username: string,
  given: string | undefined,
): { password: string; generated: boolean } {
  if (given === undefined) return { password: generatePassword(ports.random), generated: true };
  checkPasswordPolicy(given, username, ports.passwordPolicy ?? DEFAULT_PASSWORD_POLICY);
  return { password: given, generated: false };
}

/** The password to show once: a generated one; one the caller gave it knows. */
const shown = (chosen: { password: string; generated: boolean }) =>
  chosen.generated ? chosen.password : undefined;

/**
 * The user called `username` (any case).
 * @throws AdminError `not_found`: `no user <username>`.
 * @example const user = await findUser(storage, 'alice');
 */
export async function findUser(storage: Storage, username: string): Promise<UserRecord> {
  // Longer than any username can be: no need to ask storage.
  const user = username.length > 128 ? undefined : await storage.users.findByUsername(username);
  if (user === undefined) throw new AdminError('not_found', 'user', `no user ${username}`, { key: username });
  return user;
}

/** A new user's record, its password (given or generated) hashed: slow, so outside any transaction. */
export async function prepareUser(
  ports: Pick<AdminPorts, 'clock' | 'hasher' | 'passwordPolicy'>,
  input: CreateUserInput,
  password?: string,
): Promise<{ record: NewUser; password: string; generated: boolean }> {
  const chosen = choosePassword(ports, input.username, password);
  const record: NewUser = {
    id: crypto.randomUUID(),
    ...input,
    passwordHash: await ports.hasher.hash(chosen.password),
    createdAt: nowOf(ports),
  };
  return { record, ...chosen };
}

/**
 * Creates a local user with `password`, or with a generated one that is returned to be shown
 * once; the password is stored only as the password hasher's hash.
 * @throws AdminError `conflict` when the username exists in any case; `invalid_input` (problem
 * `weak_password`) for a password the policy refuses.
 * @example const { user, generatedPassword } = await createUser(ports, CreateUserInput.parse({ username: 'alice' }));
 */
export async function createUser(
  ports: Pick<AdminPorts, 'storage' | 'clock' | 'hasher' | 'passwordPolicy' | 'auditActor'>,
  input: CreateUserInput,
  password?: string,
): Promise<{ user: UserRecord; generatedPassword: string | undefined }> {
  const { record, ...chosen } = await prepareUser(ports, input, password);
  const user = await ports.storage.transaction(async (tx) => {
    const created = await refusingConflicts(
      () => tx.users.create(record),
      () =>
        new AdminError('conflict', 'user', `user ${input.username} already exists`, { key: input.username }),
      'username',
    );
    await recordObjectChange(
      tx,
      ports,
      { objectKind: 'user', objectId: created.id, subject: created.id },
      null,
      created,
      AUDITED,
    );
    return created;
  });
  return { user, generatedPassword: shown(chosen) };
}

/**
 * Every local user, by lower-cased username.
 * @example for (const user of await listUsers(ports)) console.log(user.username);
 */
export function listUsers(ports: Pick<AdminPorts, 'storage'>): Promise<UserRecord[]> {
  return ports.storage.users.list();
}

/** Applies `patch` to the user; the user may have gone in between. */
async function writeUser(
  ports: Pick<AdminPorts, 'storage' | 'clock' | 'auditActor'>,
  user: UserRecord,
  patch: Partial<Pick<UserRecord, 'disabled' | 'passwordHash' | 'email' | 'displayName' | 'groups'>>,
  options: {
    operation?: string;
    /** More of the change, in its transaction, after the user was written. */
    then?: (storage: Storage, updated: UserRecord) => Promise<void>;
  } = {},
): Promise<UserRecord> {
  const { operation, then } = options;
  return ports.storage.transaction(async (storage) => {
    const updated = await storage.users.update(user.id, { ...patch, updatedAt: nowOf(ports) });
    if (updated === undefined)
      throw new AdminError('not_found', 'user', `no user ${user.username}`, { key: user.username });
    await recordObjectChange(
      storage,
      ports,
      {
        objectKind: 'user',
        objectId: user.id,
        subject: user.id,
        ...(operation === undefined ? {} : { operation }),
      },
      user,
      updated,
      AUDITED,
    );
    await then?.(storage, updated);
    return updated;
  });
}

/** What disabling a user ended: its browser sessions and its live grants. */
export interface DisabledUserAccess {
  endedSessions: number;
  revokedGrants: number;
}

/**
 * The rest of disabling `user` when `disabled` disables it (enabled before): its sessions end and
 * its grants are revoked in the transaction of the change (see `endUserAccess`), and `ended`
 * hears how many. Re-enabling restores none of them.
 */
function disabling(
  ports: RevocationPorts,
  user: UserRecord,
  disabled: boolean | undefined,
  ended: (access: DisabledUserAccess) => void,
): ((storage: Storage) => Promise<void>) | undefined {
  if (disabled !== true || user.disabled) return undefined;
  return async (storage) => ended(await endUserAccess(storage, ports, user.id, 'user-disabled'));
}

/**
 * Stops a user from signing in (`disabled` true) or lets them again; `changed` is false when the
 * user was so already. Disabling also signs the user out everywhere, in the same transaction: every
 * browser session ends and every grant is revoked (refresh tokens get `invalid_grant`; access
 * tokens are refused by introspection and token review on every replica, and stay refused if the
 * user is enabled again). `endedSessions` and `revokedGrants` say how many (0 unless disabling).
 * @throws AdminError `not_found`.
 * @example const { changed, revokedGrants } = await setUserDisabled(ports, 'alice', true);
 */
export async function setUserDisabled(
  ports: Pick<AdminPorts, 'storage' | 'clock' | 'auditActor' | 'keyPolicy'>,
  username: string,
  disabled: boolean,
): Promise<{ user: UserRecord; changed: boolean } & DisabledUserAccess> {
  const user = await findUser(ports.storage, username);
  let access: DisabledUserAccess = { endedSessions: 0, revokedGrants: 0 };
  if (user.disabled === disabled) return { user, changed: false, ...access };
  const then = disabling(ports, user, disabled, (ended) => {
    access = ended;
  });
  const updated = await writeUser(ports, user, { disabled }, then === undefined ? {} : { then });
  return { user: updated, changed: true, ...access };
}

/**
 * Replaces a user's password with `password`, or with a generated one that is returned to be
 * shown once.
 * @throws AdminError `not_found`; `invalid_input` (problem `weak_password`) for a password the
 * policy refuses.
 * @example const { generatedPassword } = await setUserPassword(ports, 'alice');
 */
export async function setUserPassword(
  ports: Pick<AdminPorts, 'storage' | 'clock' | 'hasher' | 'passwordPolicy' | 'auditActor'>,
  username: string,
  password?: string,
): Promise<{ user: UserRecord; generatedPassword: string | undefined }> {
  const user = await findUser(ports.storage, username);
  const chosen = choosePassword(ports, user.username, password);
  const passwordHash = await ports.hasher.hash(chosen.password);
  const updated = await writeUser(ports, user, { passwordHash }, { operation: 'set-password' });
  return { user: updated, generatedPassword: shown(chosen) };
}

/**
 * The latest sign-in attempts for a username, newest first. Attempts are kept by the lower-cased
 * username as typed, so they are listed whether or not such a user exists (someone guessing
 * names); only when there are none does a missing user matter.
 * @throws AdminError `invalid_input` for a limit outside 1 to {@link LOGIN_ATTEMPTS_LIMIT}.max;
 * `not_found` when there are no attempts and no such user.
 * @example const attempts = await listLoginAttempts(ports, 'alice', 50);
 */
export async function listLoginAttempts(
  ports: Pick<AdminPorts, 'storage'>,
  username: string,
  limit: number = LOGIN_ATTEMPTS_LIMIT.default,
): Promise<LoginAttemptRecord[]> {
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > LOGIN_ATTEMPTS_LIMIT.max)
    throw new AdminError(
      'invalid_input',
      'user',
      `limit ${limit}: must be a whole number from 1 to ${LOGIN_ATTEMPTS_LIMIT.max}`,
    );
  const attempts = await ports.storage.loginAttempts.listByUsername(username.toLowerCase(), limit);
  if (attempts.length === 0) await findUser(ports.storage, username);
  return attempts;
}

/**
 * The user called `username` (any case), as the admin API reads one.
 * @throws AdminError `not_found`.
 * @example const user = await getUser(ports, 'alice');
 */
export function getUser(ports: Pick<AdminPorts, 'storage'>, username: string): Promise<UserRecord> {
  return findUser(ports.storage, username);
}

/**
 * One page of users by lower-cased username (byte order), filtered as `query` says; paged in
 * storage, never by loading every user.
 * @throws AdminError `invalid_input` naming `cursor` when the cursor is not one a page gave.
 * @example const { items, nextCursor } = await listUserPage(ports, UserListQuery.parse({ group: 'dev' }));
 */
export async function listUserPage(
  ports: Pick<AdminPorts, 'storage' | 'clock' | 'loginThrottle'>,
  query: UserListQuery,
): Promise<{ items: UserRecord[]; nextCursor: string | null }> {
  const after = decodeCursor(query.cursor, 'user');
  const throttle = ports.loginThrottle ?? DEFAULT_LOGIN_THROTTLE;
  const page: UserPageQuery = { limit: query.limit + 1 };
  if (after !== undefined) page.after = after;
  if (query.group !== undefined) page.group = query.group;
  if (query.q !== undefined) page.text = query.q;
  if (query.status !== undefined) {
    page.status = query.status;
    page.lock = {
      now: nowOf(ports),
      maxFailures: throttle.maxFailures,
      windowSeconds: throttle.windowSeconds,
    };
  }
  const rows = await ports.storage.users.page(page);
  return pageFrom(rows, query.limit, (user) => user.username.toLowerCase());
}

/**
 * Changes a user's email, display name, groups (the list replaces the old one) or disabled flag.
 * Disabling ends the user's browser sessions and revokes its grants in the same transaction (see
 * {@link setUserDisabled}). With `ifMatch` (the `etag` the caller read), the change is made only if
 * the user has not changed since, checked in the transaction of the write. A group change reaches
 * every replica's token review through the change log, as any user change does.
 * @throws AdminError `not_found`; `precondition_failed` for a stale `ifMatch`.
 * @example const user = await updateUser(ports, 'alice', { groups: ['dev'] }, { ifMatch: '"…"' });
 */
export function updateUser(
  ports: Pick<AdminPorts, 'storage' | 'clock' | 'auditActor' | 'keyPolicy'>,
  username: string,
  patch: UpdateUserInput,
  options: { ifMatch?: string | undefined } = {},
): Promise<UserRecord> {
  return ports.storage.transaction(async (storage) => {
    const user = await findUser(storage, username);
    checkIfMatch(options.ifMatch, userView(user).etag, 'user', user.username);
    const changes: Parameters<typeof writeUser>[2] = {};
    if (patch.email !== undefined) changes.email = patch.email;
    if (patch.displayName !== undefined) changes.displayName = patch.displayName;
    if (patch.groups !== undefined) changes.groups = patch.groups;
    if (patch.disabled !== undefined) changes.disabled = patch.disabled;
    if (Object.keys(changes).length === 0) return user;
    const then = disabling(ports, user, changes.disabled, () => {});
    return writeUser({ ...ports, storage }, user, changes, then === undefined ? {} : { then });
  });
}

/**
 * Deletes a user and everything that lets it in, in one transaction: its grants are revoked (their
 * refresh tokens stop working; their access tokens go into the revocation set every replica
 * consults), its browser sessions end, its linked identities, second factors and recovery codes
 * are removed. Records the sessions'
 * ending and the grants' revocation (`token.revoked`, reason `user-deleted`) as disabling does, then
 * the deletion. `revokedGrants` counts the grants that were still live.
 * @throws AdminError `not_found`; `precondition_failed` for a stale `ifMatch`.
 * @example const { revokedGrants } = await deleteUser(ports, 'alice');
 */
export function deleteUser(
  ports: Pick<AdminPorts, 'storage' | 'clock' | 'keyPolicy' | 'auditActor'>,
  username: string,
  options: { ifMatch?: string | undefined } = {},
): Promise<{ user: UserRecord; revokedGrants: number; endedSessions: number; unlinkedIdentities: number }> {
  return ports.storage.transaction(async (storage) => {
    const user = await findUser(storage, username);
    checkIfMatch(options.ifMatch, userView(user).etag, 'user', user.username);
    // Signed out everywhere first, as a disabled user is (events: sessions ended, grants revoked).
    const access = await endUserAccess(storage, ports, user.id, 'user-deleted');
    const identities = await storage.identities.listByUser(user.id);
    for (const identity of identities) await storage.identities.unlink(identity.provider, identity.subject);
    // Its second factors, recovery codes and MFA requirement go with it (no secret outlives its user).
    await storage.factors.removeAll(user.id);
    await storage.factors.setRequired(user.id, false, nowOf(ports));
    if (!(await storage.users.remove(user.id)))
      throw new AdminError('not_found', 'user', `no user ${username}`, { key: username });
    await recordObjectChange(
      storage,
      ports,
      { objectKind: 'user', objectId: user.id, subject: user.id },
      user,
      null,
      AUDITED,
    );
    return { user, ...access, unlinkedIdentities: identities.length };
  });
}

/**
 * Lifts a brute-force lock on a user's account: records an administrator's unlock, which the login
 * throttle counts like a successful sign-in (failures before it no longer count). Blocks of
 * source addresses stay as they are: they guard every account. `wasLocked` says whether the
 * account was locked.
 * @throws AdminError `not_found`.
 * @example const { wasLocked } = await unlockUser(ports, 'alice', { by: 'admin-api' });
 */
export async function unlockUser(
  ports: Pick<AdminPorts, 'storage' | 'clock' | 'loginThrottle' | 'auditActor'>,
  username: string,
  options: { by: string },
): Promise<{ user: UserRecord; wasLocked: boolean }> {
  const user = await findUser(ports.storage, username);
  const throttleOn = (storage: Storage) =>
    new LoginThrottle(storage.loginAttempts, ports.loginThrottle ?? DEFAULT_LOGIN_THROTTLE, ports.clock);
  const decision = await throttleOn(ports.storage).check(user.username);
  await ports.storage.transaction(async (tx) => {
    await recordAdminChange(tx, ports, {
      objectKind: 'user',
      objectId: user.id,
      action: 'updated',
      operation: 'unlock',
      subject: user.id,
    });
    await throttleOn(tx).record({
      username: user.username,
      userId: user.id,
      // Not an address: an unlock makes no address familiar to the account.
      sourceAddress: options.by,
      // The local account's provider, whose successes reset its count; the reason tells it apart.
      provider: 'password',
      success: true,
      reason: 'unlocked',
    });
  });
  return { user, wasLocked: decision.locked };
}
