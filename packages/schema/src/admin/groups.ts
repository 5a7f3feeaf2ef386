import * as z from 'zod/mini';
import { checked } from '../checked.js';
import { LIMITS } from '../limits.js';

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
 * A group as listed: groups are the union of users' groups; `members` counts the users in it.
 * @example Group.parse({ name: 'dev', members: 3 })
 */
export const Group = /* @__PURE__ */ z.object({
  name: /* @__PURE__ */ z.string(),
  members: /* @__PURE__ */ checked(/* @__PURE__ */ z.int(), /* @__PURE__ */ z.nonnegative()),
});
export type Group = z.infer<typeof Group>;
