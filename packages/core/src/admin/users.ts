import type { CreateUserInput } from '@idgate/schema';
import type { LoginAttemptRecord, NewUser, UserRecord } from '../model.js';
import type { Storage } from '../ports/storage.js';
import { generatePassword } from '../secrets.js';
import { AdminError, refusingConflicts } from './errors.js';
import { type AdminPorts, nowOf } from './ports.js';

/** How many sign-in attempts {@link listLoginAttempts} shows unless told, and at most. */
export const LOGIN_ATTEMPTS_LIMIT = { default: 20, max: 1000 } as const;

/** The password given, or a generated one (to be shown once). */
function choosePassword(given: string | undefined): { password: string; generated: boolean } {
  return given === undefined
    ? { password: generatePassword(), generated: true }
    : { password: given, generated: false };
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
  ports: Pick<AdminPorts, 'clock' | 'hasher'>,
  input: CreateUserInput,
  password?: string,
): Promise<{ record: NewUser; password: string; generated: boolean }> {
  const chosen = choosePassword(password);
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
 * @throws AdminError `conflict` when the username exists in any case.
 * @example const { user, generatedPassword } = await createUser(ports, CreateUserInput.parse({ username: 'alice' }));
 */
export async function createUser(
  ports: Pick<AdminPorts, 'storage' | 'clock' | 'hasher'>,
  input: CreateUserInput,
  password?: string,
): Promise<{ user: UserRecord; generatedPassword: string | undefined }> {
  const { record, ...chosen } = await prepareUser(ports, input, password);
  const user = await refusingConflicts(
    () => ports.storage.users.create(record),
    () =>
      new AdminError('conflict', 'user', `user ${input.username} already exists`, { key: input.username }),
    'username',
  );
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
async function updateUser(
  ports: Pick<AdminPorts, 'storage' | 'clock'>,
  user: UserRecord,
  patch: Partial<Pick<UserRecord, 'disabled' | 'passwordHash'>>,
): Promise<UserRecord> {
  const updated = await ports.storage.users.update(user.id, { ...patch, updatedAt: nowOf(ports) });
  if (updated === undefined)
    throw new AdminError('not_found', 'user', `no user ${user.username}`, { key: user.username });
  return updated;
}

/**
 * Stops a user from signing in (`disabled` true) or lets them again; `changed` is false when the
 * user was so already.
 * @throws AdminError `not_found`.
 * @example const { changed } = await setUserDisabled(ports, 'alice', true);
 */
export async function setUserDisabled(
  ports: Pick<AdminPorts, 'storage' | 'clock'>,
  username: string,
  disabled: boolean,
): Promise<{ user: UserRecord; changed: boolean }> {
  const user = await findUser(ports.storage, username);
  if (user.disabled === disabled) return { user, changed: false };
  return { user: await updateUser(ports, user, { disabled }), changed: true };
}

/**
 * Replaces a user's password with `password`, or with a generated one that is returned to be
 * shown once.
 * @throws AdminError `not_found`.
 * @example const { generatedPassword } = await setUserPassword(ports, 'alice');
 */
export async function setUserPassword(
  ports: Pick<AdminPorts, 'storage' | 'clock' | 'hasher'>,
  username: string,
  password?: string,
): Promise<{ user: UserRecord; generatedPassword: string | undefined }> {
  const chosen = choosePassword(password);
  const user = await findUser(ports.storage, username);
  const passwordHash = await ports.hasher.hash(chosen.password);
  return { user: await updateUser(ports, user, { passwordHash }), generatedPassword: shown(chosen) };
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
