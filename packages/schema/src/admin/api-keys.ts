import * as z from 'zod/mini';
import { checked } from '../checked.js';
import { distinct, Label, Timestamp } from './fields.js';

/**
 * The scopes of the admin API, by area (`<area>:read`, `<area>:write`, and what is apart:
 * unlocking an account, setting a password, rotating the signing keys, reading the audit trail,
 * and the incident responses — retiring a signing key at once (`keys:retire`) and revoking
 * everything issued before an instant (`sessions:revoke-all`), which no role but `admin` holds):
 * each admin operation needs one of them, which the OpenAPI document lists in its security
 * requirement.
 * @example AdminApiScope.parse('users:read')
 */
export const AdminApiScope = /* @__PURE__ */ z.enum([
  'users:read',
  'users:write',
  'users:unlock',
  'users:password',
  'sessions:read',
  'sessions:write',
  'sessions:revoke-all',
  'clients:read',
  'clients:write',
  'clusters:read',
  'clusters:write',
  'trusts:read',
  'trusts:write',
  'identity-providers:read',
  'identity-providers:write',
  'keys:read',
  'keys:rotate',
  'keys:retire',
  'api-keys:read',
  'api-keys:write',
  'audit:read',
  'declarations:apply',
]);
export type AdminApiScope = z.infer<typeof AdminApiScope>;

/**
 * Scopes an API key can carry: `tokenreview` (Kubernetes TokenReview, `POST /oauth/authenticate`),
 * `admin` (every scope of the admin API, those added later too; it does not include
 * `tokenreview`) and each scope of the admin API ({@link AdminApiScope}).
 * @example ApiKeyScope.parse('tokenreview')
 */
export const ApiKeyScope = /* @__PURE__ */ z.enum(['tokenreview', 'admin', ...AdminApiScope.options]);
export type ApiKeyScope = z.infer<typeof ApiKeyScope>;

/**
 * Roles: named sets of scopes to make a key with ({@link API_KEY_ROLES}).
 * @example ApiKeyRole.parse('helpdesk')
 */
export const ApiKeyRole = /* @__PURE__ */ z.enum(['auditor', 'helpdesk', 'operator', 'admin']);
export type ApiKeyRole = z.infer<typeof ApiKeyRole>;

/**
 * The scopes each role gives a key made with it (the key keeps the scopes, not the role):
 * - `auditor`: reads everything — every `:read` scope, the audit trail included — and changes nothing;
 * - `helpdesk`: reads users, unlocks them, sets their passwords, and sees and ends their sessions
 *   and grants;
 * - `operator`: reads everything, and manages clients, clusters, trusts, identity providers and the
 *   signing keys, and applies declarations of those — not users, sessions or API keys;
 * - `admin`: the `admin` scope, every scope of the admin API.
 * @example API_KEY_ROLES.helpdesk.includes('users:unlock') // true
 */
export const API_KEY_ROLES: Readonly<Record<ApiKeyRole, readonly ApiKeyScope[]>> = {
  auditor: [
    'users:read',
    'sessions:read',
    'clients:read',
    'clusters:read',
    'trusts:read',
    'identity-providers:read',
    'keys:read',
    'api-keys:read',
    'audit:read',
  ],
  helpdesk: ['users:read', 'users:unlock', 'users:password', 'sessions:read', 'sessions:write'],
  operator: [
    'users:read',
    'sessions:read',
    'clients:read',
    'clients:write',
    'clusters:read',
    'clusters:write',
    'trusts:read',
    'trusts:write',
    'identity-providers:read',
    'identity-providers:write',
    'keys:read',
    'keys:rotate',
    'api-keys:read',
    'audit:read',
    'declarations:apply',
  ],
  admin: ['admin'],
};

const TEN_YEARS = 315_360_000;

/** Seconds from now until a key stops working: at most ten years. */
const ExpiresIn = /* @__PURE__ */ checked(
  /* @__PURE__ */ z.int({ error: 'must be a positive whole number of seconds' }),
  /* @__PURE__ */ z.positive('must be a positive whole number of seconds'),
  /* @__PURE__ */ z.lte(TEN_YEARS, 'must be at most 315360000 seconds (ten years)'),
);

/**
 * What creating an API key takes: a name, its scopes and roles (each kept once; at least one of
 * either: the key gets the scopes and those of the roles), and optionally how many seconds it
 * lives.
 * @example CreateApiKeyInput.parse({ name: 'apiserver', scopes: ['tokenreview'], expiresIn: 2592000 })
 * @example CreateApiKeyInput.parse({ name: 'helpdesk', roles: ['helpdesk'] })
 */
export const CreateApiKeyInput = /* @__PURE__ */ checked(
  /* @__PURE__ */ z.strictObject({
    name: Label,
    scopes: /* @__PURE__ */ z.optional(/* @__PURE__ */ distinct(ApiKeyScope)),
    roles: /* @__PURE__ */ z.optional(/* @__PURE__ */ distinct(ApiKeyRole)),
    /** Seconds until the key stops working (at most ten years); absent: it works until revoked. */
    expiresIn: /* @__PURE__ */ z.optional(ExpiresIn),
  }),
  /* @__PURE__ */ z.superRefine((input, ctx) => {
    if ((input.scopes?.length ?? 0) + (input.roles?.length ?? 0) === 0)
      ctx.addIssue({ code: 'custom', message: 'give at least one scope or role', path: ['scopes'] });
  }),
);
export type CreateApiKeyInput = z.infer<typeof CreateApiKeyInput>;

/**
 * What changing an API key takes: a new name, a new expiry — `expiresIn` seconds from now, or
 * `expiresAt` an instant (null: it works until revoked), not both. Its scopes never change.
 * @example UpdateApiKeyInput.parse({ name: 'ci (old)', expiresIn: 86400 })
 * @example UpdateApiKeyInput.parse({ expiresAt: null })
 */
export const UpdateApiKeyInput = /* @__PURE__ */ checked(
  /* @__PURE__ */ z.strictObject({
    name: /* @__PURE__ */ z.optional(Label),
    /** Seconds from now until the key stops working (at most ten years). */
    expiresIn: /* @__PURE__ */ z.optional(ExpiresIn),
    /** When the key stops working, later than now and at most ten years ahead; null: never. */
    expiresAt: /* @__PURE__ */ z.optional(
      /* @__PURE__ */ z.nullable(
        /* @__PURE__ */ z.iso.datetime({
          offset: true,
          error: 'must be an ISO 8601 instant with an offset (2026-01-01T00:00:00Z), or null for never',
        }),
      ),
    ),
  }),
  /* @__PURE__ */ z.superRefine((input, ctx) => {
    if (input.expiresIn !== undefined && input.expiresAt !== undefined)
      ctx.addIssue({ code: 'custom', message: 'give expiresIn or expiresAt, not both', path: ['expiresAt'] });
  }),
);
export type UpdateApiKeyInput = z.infer<typeof UpdateApiKeyInput>;

/**
 * An API key as listed: its public prefix, never the key or its hash.
 * @example ApiKey.parse({ id: 'k1', name: 'apiserver', prefix: 'idg_ab12cd34', scopes: ['tokenreview'], createdAt: '2026-01-01T00:00:00.000Z', lastUsedAt: null, expiresAt: null, revokedAt: null })
 */
export const ApiKey = /* @__PURE__ */ z.object({
  id: /* @__PURE__ */ z.string(),
  name: /* @__PURE__ */ z.string(),
  prefix: /* @__PURE__ */ z.string(),
  scopes: /* @__PURE__ */ z.array(ApiKeyScope),
  /** The cluster a `tokenreview` key answers for (only that cluster's tokens); absent or null for none. */
  cluster: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.nullable(/* @__PURE__ */ z.string())),
  createdAt: Timestamp,
  lastUsedAt: /* @__PURE__ */ z.nullable(Timestamp),
  /** When the key stops working; null for a key that works until revoked. */
  expiresAt: /* @__PURE__ */ z.nullable(Timestamp),
  revokedAt: /* @__PURE__ */ z.nullable(Timestamp),
});
export type ApiKey = z.infer<typeof ApiKey>;

/**
 * An API key just created: the key as listed, and the key itself — shown only this once.
 * @example CreatedApiKey.parse({ ...apiKey, key: 'idg_ab12cd34_…' })
 */
export const CreatedApiKey = /* @__PURE__ */ z.extend(ApiKey, { key: /* @__PURE__ */ z.string() });
export type CreatedApiKey = z.infer<typeof CreatedApiKey>;
