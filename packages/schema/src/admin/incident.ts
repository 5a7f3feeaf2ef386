import * as z from 'zod/mini';
import { checked } from '../checked.js';
import { Timestamp } from './fields.js';
import { GrantInfo, SessionInfo } from './sessions.js';
import { SigningKeyInfo } from './signing-keys.js';

/**
 * What retiring a signing key at once takes: `rotate: true` makes a new signing key in the same
 * step (needed when the key retired is the only one that may sign).
 * @example RetireSigningKeyInput.parse({ rotate: true })
 */
export const RetireSigningKeyInput = /* @__PURE__ */ z.strictObject({
  rotate: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.boolean()),
});
export type RetireSigningKeyInput = z.infer<typeof RetireSigningKeyInput>;

/**
 * What retiring a signing key at once did: the key as it is now (`expired`: out of JWKS, verifying
 * nothing) and the key made in the same step, if one was.
 * @example SigningKeyRetirement.parse({ retired: { kid: 'k1', alg: 'RS256', state: 'expired', createdAt: '2026-01-01T00:00:00.000Z', retiredAt: '2026-01-02T00:00:00.000Z', publishedUntil: '2026-01-02T00:00:00.000Z' }, created: null })
 */
export const SigningKeyRetirement = /* @__PURE__ */ z.object({
  retired: SigningKeyInfo,
  created: /* @__PURE__ */ z.nullable(SigningKeyInfo),
});
export type SigningKeyRetirement = z.infer<typeof SigningKeyRetirement>;

/**
 * Whose tokens a not-before covers: every token (`global`), a client's (`client`, its client id)
 * or a user's (`user`, their username in requests, their id in answers).
 * @example NotBeforeScope.parse('user')
 */
export const NotBeforeScope = /* @__PURE__ */ z.enum(['global', 'client', 'user']);
export type NotBeforeScope = z.infer<typeof NotBeforeScope>;

/**
 * What setting a not-before takes (`POST /admin/v1/not-before`): the scope, whom it names (a
 * client id or a username; none for `global`) and the instant (default: now; never later than
 * the server's now plus a minute, and stored as at most the server's now).
 * @example SetNotBeforeInput.parse({ scope: 'client', subject: 'cl_web', before: '2026-01-01T00:00:00Z' })
 */
export const SetNotBeforeInput = /* @__PURE__ */ checked(
  /* @__PURE__ */ z.strictObject({
    scope: NotBeforeScope,
    subject: /* @__PURE__ */ z.optional(
      /* @__PURE__ */ checked(
        /* @__PURE__ */ z.string(),
        /* @__PURE__ */ z.minLength(1, 'must not be empty'),
        /* @__PURE__ */ z.maxLength(256, 'must be at most 256 characters'),
      ),
    ),
    before: /* @__PURE__ */ z.optional(Timestamp),
  }),
  /* @__PURE__ */ z.superRefine((input, ctx) => {
    if (input.scope === 'global' && input.subject !== undefined)
      ctx.addIssue({ code: 'custom', message: 'a global not-before names no subject', path: ['subject'] });
    if (input.scope !== 'global' && input.subject === undefined)
      ctx.addIssue({
        code: 'custom',
        message: `a ${input.scope} not-before needs the ${input.scope === 'client' ? 'client id' : 'username'}`,
        path: ['subject'],
      });
  }),
);
export type SetNotBeforeInput = z.infer<typeof SetNotBeforeInput>;

/**
 * A not-before in force: every token, grant, session or code of its scope issued before
 * `notBefore` is refused everywhere.
 * @example NotBefore.parse({ scope: 'global', subject: null, notBefore: '2026-01-01T00:00:00.000Z', setAt: '2026-01-01T00:00:00.000Z' })
 */
export const NotBefore = /* @__PURE__ */ z.object({
  scope: NotBeforeScope,
  /** The client id or the user id; null for `global`. */
  subject: /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.string()),
  notBefore: Timestamp,
  /** When it was last raised. */
  setAt: Timestamp,
});
export type NotBefore = z.infer<typeof NotBefore>;

/**
 * A source address that sign-ins are refused from now (too many failures, `bruteForce.*`): the
 * browser's pages (login and device verification) and the password grant are counted apart.
 * @example BlockedAddress.parse({ address: '203.0.113.7', channel: 'browser', failures: 100, blockedUntil: '2026-01-01T00:15:00.000Z' })
 */
export const BlockedAddress = /* @__PURE__ */ z.object({
  address: /* @__PURE__ */ z.string(),
  channel: /* @__PURE__ */ z.enum(['browser', 'grant']),
  /** Failures within the window that blocked it. */
  failures: /* @__PURE__ */ checked(/* @__PURE__ */ z.int(), /* @__PURE__ */ z.gte(0)),
  blockedUntil: Timestamp,
});
export type BlockedAddress = z.infer<typeof BlockedAddress>;

/**
 * A source address as the admin API takes it in a path: an IPv4 or IPv6 address.
 * @example SourceAddress.parse('2001:db8::1')
 */
export const SourceAddress = /* @__PURE__ */ z.union([
  /* @__PURE__ */ z.ipv4({ error: 'must be an IPv4 or IPv6 address' }),
  /* @__PURE__ */ z.ipv6({ error: 'must be an IPv4 or IPv6 address' }),
]);
export type SourceAddress = z.infer<typeof SourceAddress>;

/**
 * What lifting blocks did: the addresses that were blocked and are not now.
 * @example LiftedBlocks.parse({ lifted: ['203.0.113.7'] })
 */
export const LiftedBlocks = /* @__PURE__ */ z.object({
  lifted: /* @__PURE__ */ z.array(/* @__PURE__ */ z.string()),
});
export type LiftedBlocks = z.infer<typeof LiftedBlocks>;

/**
 * A browser session that signed in to a client, as listed per client
 * (`GET /admin/v1/clients/{clientId}/sessions`): a {@link SessionInfo} with its user's id.
 * @example ClientSessionInfo.parse({ id: 's1', userId: 'u1', createdAt: '2026-01-01T00:00:00.000Z', lastSeenAt: '2026-01-01T00:00:00.000Z', expiresAt: '2026-01-02T00:00:00.000Z', sourceAddress: null, userAgent: null, clients: [] })
 */
export const ClientSessionInfo = /* @__PURE__ */ z.extend(SessionInfo, {
  userId: /* @__PURE__ */ z.string(),
});
export type ClientSessionInfo = z.infer<typeof ClientSessionInfo>;

/**
 * A grant of a client, as listed per client (`GET /admin/v1/clients/{clientId}/grants`): a
 * {@link GrantInfo} with its user's id.
 * @example ClientGrantInfo.parse({ id: 'g1', userId: 'u1', clientId: 'cl_web', clientName: 'Web', scopes: [], sessionId: null, createdAt: '2026-01-01T00:00:00.000Z', lastUsedAt: null, lastUsedAddress: null, expiresAt: '2026-01-31T00:00:00.000Z' })
 */
export const ClientGrantInfo = /* @__PURE__ */ z.extend(GrantInfo, { userId: /* @__PURE__ */ z.string() });
export type ClientGrantInfo = z.infer<typeof ClientGrantInfo>;
