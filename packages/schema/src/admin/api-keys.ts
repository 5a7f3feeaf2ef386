import * as z from 'zod/mini';
import { checked } from '../checked.js';
import { distinct, Label, Timestamp } from './fields.js';

/** Scopes an API key can carry. @example ApiKeyScope.parse('tokenreview') */
export const ApiKeyScope = /* @__PURE__ */ z.enum(['tokenreview', 'admin']);
export type ApiKeyScope = z.infer<typeof ApiKeyScope>;

/**
 * What creating an API key takes: a name and at least one scope, each kept once, and optionally
 * how many seconds it lives.
 * @example CreateApiKeyInput.parse({ name: 'apiserver', scopes: ['tokenreview'], expiresIn: 2592000 })
 */
export const CreateApiKeyInput = /* @__PURE__ */ z.strictObject({
  name: Label,
  scopes: /* @__PURE__ */ checked(
    /* @__PURE__ */ distinct(ApiKeyScope),
    /* @__PURE__ */ z.refine((scopes) => scopes.length > 0, 'give at least one'),
  ),
  /** Seconds until the key stops working (at most ten years); absent: it works until revoked. */
  expiresIn: /* @__PURE__ */ z.optional(
    /* @__PURE__ */ checked(
      /* @__PURE__ */ z.int({ error: 'must be a positive whole number of seconds' }),
      /* @__PURE__ */ z.positive('must be a positive whole number of seconds'),
      /* @__PURE__ */ z.lte(315_360_000, 'must be at most 315360000 seconds (ten years)'),
    ),
  ),
});
export type CreateApiKeyInput = z.infer<typeof CreateApiKeyInput>;

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
