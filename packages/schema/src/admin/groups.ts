import * as z from 'zod/mini';
import { checked } from '../checked.js';
import { LIMITS } from '../limits.js';
import { DisplayName, Timestamp } from './fields.js';

/**
 * A group name: 1–256 printable characters (`LIMITS.groupNameLength`), no `system:` prefix
 * (reserved by Kubernetes).
 * @example GroupName.parse('platform-admins')
 */
export const GroupName = /* @__PURE__ */ checked(
  /* @__PURE__ */ z.string(),
  /* @__PURE__ */ z.minLength(1),
  /* @__PURE__ */ z.maxLength(LIMITS.groupNameLength),
  /* @__PURE__ */ z.regex(/^[\x21-\x7e]+$/, 'may hold only printable ASCII characters without spaces'),
  /* @__PURE__ */ z.refine(
    (g) => !g.startsWith('system:'),
    'must not start with "system:", which Kubernetes reserves',
  ),
);

/**
 * A group: an object of its own (it exists with no member too), its description, and `members`,
 * how many users are in it; `requireMfa`, whether its members sign in with a second factor.
 * @example Group.parse({ name: 'dev', description: null, requireMfa: false, members: 3, createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z' })
 */
export const Group = /* @__PURE__ */ z.object({
  name: /* @__PURE__ */ z.string(),
  description: /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.string()),
  // Defaulted: an idgate from before the setting leaves it out.
  requireMfa: /* @__PURE__ */ z._default(/* @__PURE__ */ z.boolean(), false),
  members: /* @__PURE__ */ checked(/* @__PURE__ */ z.int(), /* @__PURE__ */ z.nonnegative()),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type Group = z.infer<typeof Group>;

/**
 * What creating a group takes: its name and, optionally, a description (1–256 characters, no
 * control characters) and `requireMfa` (its members sign in with a second factor; default false).
 * @example CreateGroupInput.parse({ name: 'platform-admins', description: 'Cluster administrators', requireMfa: true })
 */
export const CreateGroupInput = /* @__PURE__ */ z.strictObject({
  name: GroupName,
  description: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.nullable(DisplayName)),
  requireMfa: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.boolean()),
});
export type CreateGroupInput = z.infer<typeof CreateGroupInput>;

/**
 * A change of a group: a new name (every member is renamed with it), a new description (null
 * removes it) and/or `requireMfa`. At least one field.
 * @example UpdateGroupInput.parse({ name: 'platform-ops' })
 */
export const UpdateGroupInput = /* @__PURE__ */ checked(
  /* @__PURE__ */ z.strictObject({
    name: /* @__PURE__ */ z.optional(GroupName),
    description: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.nullable(DisplayName)),
    requireMfa: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.boolean()),
  }),
  /* @__PURE__ */ z.refine(
    (input) => input.name !== undefined || input.description !== undefined || input.requireMfa !== undefined,
    'must name at least one of name, description, requireMfa',
  ),
);
export type UpdateGroupInput = z.infer<typeof UpdateGroupInput>;
