import * as z from 'zod/mini';
import { Timestamp } from './fields.js';

/** Signing algorithms idgate supports. @example SigningAlgorithm.parse('ES256') */
export const SigningAlgorithm = /* @__PURE__ */ z.enum(['RS256', 'ES256', 'EdDSA']);
export type SigningAlgorithm = z.infer<typeof SigningAlgorithm>;

/**
 * A signing key as listed: its state in the rotation, never private material.
 * @example SigningKeyInfo.parse({ kid: 'k1', alg: 'RS256', state: 'active', createdAt: '2026-01-01T00:00:00.000Z', retiredAt: null, publishedUntil: null })
 */
export const SigningKeyInfo = /* @__PURE__ */ z.object({
  kid: /* @__PURE__ */ z.string(),
  alg: SigningAlgorithm,
  /** `next`: published, signing after the activation delay; `active`: signing; `retired`: still published; `expired`. */
  state: /* @__PURE__ */ z.enum(['next', 'active', 'retired', 'expired']),
  createdAt: Timestamp,
  retiredAt: /* @__PURE__ */ z.nullable(Timestamp),
  publishedUntil: /* @__PURE__ */ z.nullable(Timestamp),
});
export type SigningKeyInfo = z.infer<typeof SigningKeyInfo>;

/**
 * What a signing key rotation did: the new key and the kids it retired.
 * @example SigningKeyRotation.parse({ created: { kid: 'k2', alg: 'RS256', state: 'active', createdAt: '2026-01-01T00:00:00.000Z', retiredAt: null, publishedUntil: null }, retired: ['k1'] })
 */
export const SigningKeyRotation = /* @__PURE__ */ z.object({
  created: SigningKeyInfo,
  retired: /* @__PURE__ */ z.array(/* @__PURE__ */ z.string()),
});
export type SigningKeyRotation = z.infer<typeof SigningKeyRotation>;
