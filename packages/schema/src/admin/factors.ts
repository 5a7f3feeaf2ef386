import * as z from 'zod/mini';
import { Timestamp } from './fields.js';

/**
 * A second factor of a user, as administrators see it (`GET /admin/v1/users/{username}/factors`):
 * its kind, the name its user gave it, when it was enrolled and last used. Never its secret.
 * @example UserFactor.parse({ id: 'f1', kind: 'totp', name: 'phone', createdAt: '2026-01-01T00:00:00.000Z', lastUsedAt: null })
 */
export const UserFactor = /* @__PURE__ */ z.object({
  id: /* @__PURE__ */ z.string(),
  /** `totp` (an authenticator app) or `webauthn` (a passkey or security key). */
  kind: /* @__PURE__ */ z.enum(['totp', 'webauthn']),
  name: /* @__PURE__ */ z.string(),
  createdAt: Timestamp,
  lastUsedAt: /* @__PURE__ */ z.nullable(Timestamp),
});
export type UserFactor = z.infer<typeof UserFactor>;

/**
 * A user's second factors, how many unused recovery codes they hold, and whether a second factor
 * is required of them (then their next sign-in enrols one if they have none).
 * @example UserFactors.parse({ username: 'alice', mfaRequired: false, recoveryCodesLeft: 10, factors: [] })
 */
export const UserFactors = /* @__PURE__ */ z.object({
  username: /* @__PURE__ */ z.string(),
  mfaRequired: /* @__PURE__ */ z.boolean(),
  recoveryCodesLeft: /* @__PURE__ */ z.int(),
  factors: /* @__PURE__ */ z.array(UserFactor),
});
export type UserFactors = z.infer<typeof UserFactors>;

/**
 * Requires (or stops requiring) a second factor of a user
 * (`PUT /admin/v1/users/{username}/factors/requirement`).
 * @example MfaRequirement.parse({ required: true })
 */
export const MfaRequirement = /* @__PURE__ */ z.object({ required: /* @__PURE__ */ z.boolean() });
export type MfaRequirement = z.infer<typeof MfaRequirement>;

/**
 * What resetting a user's second factors removed (`DELETE /admin/v1/users/{username}/factors`):
 * how many factors; every recovery code went too.
 * @example FactorsReset.parse({ removed: 2 })
 */
export const FactorsReset = /* @__PURE__ */ z.object({ removed: /* @__PURE__ */ z.int() });
export type FactorsReset = z.infer<typeof FactorsReset>;
