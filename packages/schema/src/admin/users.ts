import * as z from 'zod/mini';
import { checked } from '../checked.js';
import { LIMITS } from '../limits.js';
import { CONTROL_CHARACTERS, DisplayName, distinct, Email, Timestamp } from './fields.js';
import { GroupName } from './groups.js';
import { PageQuery } from './page.js';

/**
 * A username: 1–128 characters of letters, digits and `. _ @ -`, starting with a letter or digit.
 * Usernames are unique regardless of case.
 * @example Username.parse('alice.smith@example.com')
 */
export const Username = /* @__PURE__ */ checked(
  /* @__PURE__ */ z.string(),
  /* @__PURE__ */ z.minLength(1),
  /* @__PURE__ */ z.maxLength(128),
  /* @__PURE__ */ z.regex(
    /^[A-Za-z0-9][A-Za-z0-9._@-]*$/,
    'may hold only letters, digits and . _ @ -, starting with a letter or digit',
  ),
);

/**
 * A local user's groups: each a {@link GroupName}, kept once each in the order given, at most
 * `LIMITS.groupsPerUser` (200) of them.
 * @example UserGroups.parse(['dev', 'ops', 'dev']) // ['dev', 'ops']
 */
export const UserGroups = /* @__PURE__ */ z.pipe(
  /* @__PURE__ */ distinct(GroupName),
  /* @__PURE__ */ checked(
    /* @__PURE__ */ z.array(/* @__PURE__ */ z.string()),
    /* @__PURE__ */ z.maxLength(
      LIMITS.groupsPerUser,
      `must hold at most ${LIMITS.groupsPerUser} groups: the most a user may be in`,
    ),
  ),
);

/**
 * What creating a local user takes (the password goes to the password hasher, separately):
 * groups are kept once each, in the order given.
 * @example CreateUserInput.parse({ username: 'alice', email: 'alice@example.com', groups: ['dev'] })
 */
export const CreateUserInput = /* @__PURE__ */ z.strictObject({
  username: Username,
  email: /* @__PURE__ */ z._default(/* @__PURE__ */ z.nullable(Email), null),
  displayName: /* @__PURE__ */ z._default(/* @__PURE__ */ z.nullable(DisplayName), null),
  groups: /* @__PURE__ */ z._default(UserGroups, []),
});
export type CreateUserInput = z.infer<typeof CreateUserInput>;

/**
 * An external identity's stable id at its provider (`sub`, a user id, an entryUUID).
 * @example IdentitySubject.parse('583231')
 */
export const IdentitySubject = /* @__PURE__ */ checked(
  /* @__PURE__ */ z.string(),
  /* @__PURE__ */ z.minLength(1, 'must not be empty'),
  /* @__PURE__ */ z.maxLength(1024, 'must be at most 1024 characters'),
);

/**
 * What linking an external identity to a local user takes.
 * @example LinkIdentityInput.parse({ username: 'alice', provider: 'github', subject: '583231' })
 */
export const LinkIdentityInput = /* @__PURE__ */ z.strictObject({
  username: /* @__PURE__ */ z.string(),
  provider: /* @__PURE__ */ z.string(),
  subject: IdentitySubject,
});
export type LinkIdentityInput = z.infer<typeof LinkIdentityInput>;

/**
 * A user as the admin API and `idgate users list --json` show it (never its password hash).
 * @example User.parse({ id: 'u1', username: 'alice', email: null, displayName: null, groups: [], disabled: false, createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z', etag: '"0123456789abcdef"' })
 */
export const User = /* @__PURE__ */ z.object({
  id: /* @__PURE__ */ z.string(),
  username: /* @__PURE__ */ z.string(),
  email: /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.string()),
  displayName: /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.string()),
  groups: /* @__PURE__ */ z.array(/* @__PURE__ */ z.string()),
  disabled: /* @__PURE__ */ z.boolean(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  /** The version of the user (an entity tag, also the `ETag` header): send it as `If-Match`. */
  etag: /* @__PURE__ */ z.string(),
});
export type User = z.infer<typeof User>;

/**
 * A password sign-in attempt as listed, newest first (`idgate users logins --json`).
 * @example LoginAttempt.parse({ id: 'a1', username: 'alice', userId: 'u1', sourceAddress: '203.0.113.7', provider: 'password', success: false, reason: 'invalid_credentials', createdAt: '2026-01-01T00:00:00.000Z' })
 */
export const LoginAttempt = /* @__PURE__ */ z.object({
  id: /* @__PURE__ */ z.string(),
  /** The username as typed, lower-cased. */
  username: /* @__PURE__ */ z.string(),
  userId: /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.string()),
  sourceAddress: /* @__PURE__ */ z.string(),
  /**
   * `password` for local accounts; the identity provider's name for federated ones; `admin` for an
   * administrator's unlock (a success, reason `unlocked`: failures before it no longer lock).
   */
  provider: /* @__PURE__ */ z.string(),
  success: /* @__PURE__ */ z.boolean(),
  /** Why it failed: `invalid_credentials`, `disabled`, `locked`; `unlocked` for an administrator's unlock. */
  reason: /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.string()),
  createdAt: Timestamp,
});
export type LoginAttempt = z.infer<typeof LoginAttempt>;

/**
 * A password as an administrator sends it; the password policy (length, common passwords, the
 * username) is checked by the use case, which names the reason (`weak_password`).
 * @example Password.parse('correct horse battery staple')
 */
export const Password = /* @__PURE__ */ z.string({ error: 'must be a string' });

/** Which users `GET /admin/v1/users?status=` lists: `active` ones are neither disabled nor locked. */
export const UserStatus = /* @__PURE__ */ z.enum(['active', 'disabled', 'locked']);
export type UserStatus = z.infer<typeof UserStatus>;

/**
 * The query of `GET /admin/v1/users`: a page (see {@link PageQuery}) of users by username,
 * filtered by `group`, `status` and `q` (text in the username, email or display name, any case).
 * @example UserListQuery.parse({ group: 'dev', status: 'active', q: 'ali', limit: '20' })
 */
export const UserListQuery = /* @__PURE__ */ z.extend(PageQuery, {
  group: /* @__PURE__ */ z.optional(GroupName),
  status: /* @__PURE__ */ z.optional(UserStatus),
  q: /* @__PURE__ */ z.optional(
    /* @__PURE__ */ checked(
      /* @__PURE__ */ z.string(),
      /* @__PURE__ */ z.minLength(1, 'must not be empty'),
      /* @__PURE__ */ z.maxLength(256, 'must be at most 256 characters'),
      /* @__PURE__ */ z.refine(
        (text) => !CONTROL_CHARACTERS.test(text),
        'must not contain control characters',
      ),
    ),
  ),
});
export type UserListQuery = z.infer<typeof UserListQuery>;

/**
 * The body of `POST /admin/v1/users`: the user and, optionally, its password (without one a
 * password is generated and answered once).
 * @example CreateUserRequest.parse({ username: 'alice', password: 'correct horse battery staple' })
 */
export const CreateUserRequest = /* @__PURE__ */ z.extend(CreateUserInput, {
  password: /* @__PURE__ */ z.optional(Password),
});
export type CreateUserRequest = z.input<typeof CreateUserRequest>;

/**
 * A user as creating it (or setting its password) answers: with `password` when idgate generated
 * it, shown only this once.
 * @example CreatedUser.parse({ ...user, password: 'q3…' })
 */
export const CreatedUser = /* @__PURE__ */ z.extend(User, {
  password: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
});
export type CreatedUser = z.infer<typeof CreatedUser>;

/**
 * The body of `PATCH /admin/v1/users/{username}`: the fields to change (null clears email or
 * display name; `groups` replaces the list).
 * @example UpdateUserInput.parse({ groups: ['dev', 'ops'], disabled: false })
 */
export const UpdateUserInput = /* @__PURE__ */ z.strictObject({
  email: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.nullable(Email)),
  displayName: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.nullable(DisplayName)),
  groups: /* @__PURE__ */ z.optional(UserGroups),
  disabled: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.boolean()),
});
export type UpdateUserInput = z.infer<typeof UpdateUserInput>;

/**
 * The body of `PUT /admin/v1/users/{username}/password`: the new password, or none to have one
 * generated (answered once).
 * @example SetPasswordInput.parse({})
 */
export const SetPasswordInput = /* @__PURE__ */ z.strictObject({
  password: /* @__PURE__ */ z.optional(Password),
});
export type SetPasswordInput = z.infer<typeof SetPasswordInput>;

/**
 * The query of `GET /admin/v1/users/{username}/logins`: how many of the latest attempts
 * (1–1000, default 20).
 * @example LoginAttemptQuery.parse({ limit: '50' }) // { limit: 50 }
 */
export const LoginAttemptQuery = /* @__PURE__ */ z.object({
  limit: /* @__PURE__ */ z._default(
    /* @__PURE__ */ z.pipe(
      /* @__PURE__ */ z.pipe(
        /* @__PURE__ */ checked(
          /* @__PURE__ */ z.string(),
          /* @__PURE__ */ z.regex(/^[0-9]{1,5}$/, 'must be a whole number from 1 to 1000'),
        ),
        /* @__PURE__ */ z.transform(Number),
      ),
      /* @__PURE__ */ checked(
        /* @__PURE__ */ z.int(),
        /* @__PURE__ */ z.gte(1, 'must be a whole number from 1 to 1000'),
        /* @__PURE__ */ z.lte(1000, 'must be a whole number from 1 to 1000'),
      ),
    ),
    20,
  ),
});

/**
 * The body of `POST /admin/v1/users/{username}/identities`: the identity provider (one kept in
 * the database) and the subject there.
 * @example LinkIdentityRequest.parse({ provider: 'github', subject: '583231' })
 */
export const LinkIdentityRequest = /* @__PURE__ */ z.strictObject({
  provider: /* @__PURE__ */ checked(
    /* @__PURE__ */ z.string(),
    /* @__PURE__ */ z.minLength(1, 'must not be empty'),
    /* @__PURE__ */ z.maxLength(64, 'must be at most 64 characters'),
  ),
  subject: IdentitySubject,
});
export type LinkIdentityRequest = z.infer<typeof LinkIdentityRequest>;
