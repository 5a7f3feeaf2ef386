import * as z from 'zod/mini';
import { checked } from '../checked.js';
import { Timestamp } from './fields.js';

/**
 * The id of a browser session or of a grant in an admin path: 1–64 letters, digits and `-`
 * (idgate makes UUIDs).
 * @example SessionId.parse('0b6f7c2e-7d1a-4c53-9d7e-2f1c4b8a9e10')
 */
export const SessionId = /* @__PURE__ */ checked(
  /* @__PURE__ */ z.string(),
  /* @__PURE__ */ z.minLength(1),
  /* @__PURE__ */ z.maxLength(64),
  /* @__PURE__ */ z.regex(/^[A-Za-z0-9-]+$/, 'must be an id of 1–64 letters, digits and -'),
);
export type SessionId = z.infer<typeof SessionId>;

/**
 * The id of a grant in an admin path (same form as {@link SessionId}).
 * @example GrantId.parse('5c1e0d7a-0f4b-4e8e-bb2f-6a9d3c2e1f00')
 */
export const GrantId = SessionId;
export type GrantId = SessionId;

/**
 * A signed-in browser of a user, as listed (`GET /admin/v1/users/{username}/sessions`): when it
 * signed in, when it was last seen signing in to an application, where from, and the applications
 * it signed in to. Never its cookie secret or hash.
 * @example SessionInfo.parse({ id: 's1', createdAt: '2026-01-01T00:00:00.000Z', lastSeenAt: '2026-01-01T00:05:00.000Z', expiresAt: '2026-01-02T00:00:00.000Z', sourceAddress: '203.0.113.7', userAgent: 'Mozilla/5.0', clients: [{ clientId: 'cl_web', name: 'Web' }] })
 */
export const SessionInfo = /* @__PURE__ */ z.object({
  id: /* @__PURE__ */ z.string(),
  createdAt: Timestamp,
  /** The latest time the session signed the browser in to an application (its creation at first). */
  lastSeenAt: Timestamp,
  expiresAt: Timestamp,
  /** The address the browser signed in from; null for sessions older than idgate recording it. */
  sourceAddress: /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.string()),
  userAgent: /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.string()),
  /** The applications the session signed in to (name null when the client is gone). */
  clients: /* @__PURE__ */ z.array(
    /* @__PURE__ */ z.object({
      clientId: /* @__PURE__ */ z.string(),
      name: /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.string()),
    }),
  ),
});
export type SessionInfo = z.infer<typeof SessionInfo>;

/**
 * A live grant of a user, as listed (`GET /admin/v1/users/{username}/grants`): an application's
 * authorization to act for the user — what its refresh tokens and access tokens stand on.
 * @example GrantInfo.parse({ id: 'g1', clientId: 'cl_web', clientName: 'Web', scopes: ['openid', 'offline_access'], sessionId: null, createdAt: '2026-01-01T00:00:00.000Z', lastUsedAt: '2026-01-01T01:00:00.000Z', lastUsedAddress: '203.0.113.7', expiresAt: '2026-01-31T00:00:00.000Z' })
 */
export const GrantInfo = /* @__PURE__ */ z.object({
  id: /* @__PURE__ */ z.string(),
  clientId: /* @__PURE__ */ z.string(),
  /** null when the client is gone. */
  clientName: /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.string()),
  scopes: /* @__PURE__ */ z.array(/* @__PURE__ */ z.string()),
  /** The browser session the grant was made in, if any. */
  sessionId: /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.string()),
  createdAt: Timestamp,
  /** The latest token request on the grant (its code exchange, then each refresh). */
  lastUsedAt: /* @__PURE__ */ z.nullable(Timestamp),
  /** The address of that request. */
  lastUsedAddress: /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.string()),
  /** The grant's absolute end: no refresh token outlives it. */
  expiresAt: Timestamp,
  /**
   * The audiences (RFC 8707 resources: cluster audiences, APIs) the person approved at sign-in:
   * every token of the grant is for some of them. null for a grant opened before idgate recorded
   * them (refreshed only without `resource`); absent from a server that does not record them.
   */
  resources: /* @__PURE__ */ z.optional(
    /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.array(/* @__PURE__ */ z.string())),
  ),
});
export type GrantInfo = z.infer<typeof GrantInfo>;

/**
 * What ending every session of a user did: how many sessions ended and how many grants made in
 * them were revoked.
 * @example EndedSessions.parse({ ended: 2, revokedGrants: 3 })
 */
export const EndedSessions = /* @__PURE__ */ z.object({
  ended: /* @__PURE__ */ checked(/* @__PURE__ */ z.int(), /* @__PURE__ */ z.gte(0)),
  revokedGrants: /* @__PURE__ */ checked(/* @__PURE__ */ z.int(), /* @__PURE__ */ z.gte(0)),
});
export type EndedSessions = z.infer<typeof EndedSessions>;

/**
 * What revoking every grant of a user did: how many were revoked.
 * @example RevokedGrants.parse({ revoked: 2 })
 */
export const RevokedGrants = /* @__PURE__ */ z.object({
  revoked: /* @__PURE__ */ checked(/* @__PURE__ */ z.int(), /* @__PURE__ */ z.gte(0)),
});
export type RevokedGrants = z.infer<typeof RevokedGrants>;
