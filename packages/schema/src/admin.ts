import * as z from 'zod/mini';
import { checked } from './checked.js';

const Timestamp = /* @__PURE__ */ z.iso.datetime({ offset: true });

/**
 * One page of a listing of the admin API: `items` in the listing's order and, when there are
 * more, the opaque `nextCursor` to pass as `?cursor=` for the next page (null on the last page).
 * @example pageOf(User).parse({ items: [], nextCursor: null })
 */
export const pageOf = <T extends z.ZodMiniType>(item: T) =>
  /* @__PURE__ */ z.object({
    items: /* @__PURE__ */ z.array(item),
    nextCursor: /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.string()),
  });

/**
 * The paging parameters of a listing (`?limit=&cursor=`), as the query string sends them:
 * `limit` 1–500 (default 100), `cursor` the `nextCursor` of the page before.
 * @example PageQuery.parse({ limit: '50' }) // { limit: 50 }
 */
export const PageQuery = /* @__PURE__ */ z.object({
  limit: /* @__PURE__ */ z._default(
    /* @__PURE__ */ z.pipe(
      /* @__PURE__ */ z.pipe(
        /* @__PURE__ */ checked(
          /* @__PURE__ */ z.string(),
          /* @__PURE__ */ z.regex(/^[0-9]{1,4}$/, 'must be a whole number from 1 to 500'),
        ),
        /* @__PURE__ */ z.transform(Number),
      ),
      /* @__PURE__ */ checked(
        /* @__PURE__ */ z.int(),
        /* @__PURE__ */ z.gte(1, 'must be a whole number from 1 to 500'),
        /* @__PURE__ */ z.lte(500, 'must be a whole number from 1 to 500'),
      ),
    ),
    100,
  ),
  cursor: /* @__PURE__ */ z.optional(
    /* @__PURE__ */ checked(
      /* @__PURE__ */ z.string(),
      /* @__PURE__ */ z.minLength(1),
      /* @__PURE__ */ z.maxLength(512),
    ),
  ),
});
export type PageQuery = z.infer<typeof PageQuery>;

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
 * A group name: 1–256 printable characters, no `system:` prefix (reserved by Kubernetes).
 * @example GroupName.parse('platform-admins')
 */
export const GroupName = /* @__PURE__ */ checked(
  /* @__PURE__ */ z.string(),
  /* @__PURE__ */ z.minLength(1),
  /* @__PURE__ */ z.maxLength(256),
  /* @__PURE__ */ z.regex(/^[\x21-\x7e]+$/, 'may hold only printable ASCII characters without spaces'),
  /* @__PURE__ */ z.refine(
    (g) => !g.startsWith('system:'),
    'must not start with "system:", which Kubernetes reserves',
  ),
);

/** The distinct values of a list, in the order first given. */
const distinct = <T extends z.ZodMiniType>(item: T) =>
  /* @__PURE__ */ z.pipe(
    /* @__PURE__ */ z.array(item),
    /* @__PURE__ */ z.transform((values) => [...new Set(values)]),
  );

/** An email address. */
const Email = /* @__PURE__ */ z.email({ error: 'must be an email address' });

// biome-ignore lint/suspicious/noControlCharactersInRegex: what the check refuses
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/;

/** A display name: trimmed, 1–256 characters, no control characters. */
const DisplayName = /* @__PURE__ */ checked(
  /* @__PURE__ */ z.string(),
  /* @__PURE__ */ z.trim(),
  /* @__PURE__ */ z.minLength(1, 'must not be empty'),
  /* @__PURE__ */ z.maxLength(256, 'must be at most 256 characters'),
  /* @__PURE__ */ z.refine((name) => !CONTROL_CHARACTERS.test(name), 'must not contain control characters'),
);

/** A name people recognize an object by: trimmed, not empty. */
const Label = /* @__PURE__ */ checked(
  /* @__PURE__ */ z.string(),
  /* @__PURE__ */ z.trim(),
  /* @__PURE__ */ z.minLength(1, 'must not be empty'),
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
  groups: /* @__PURE__ */ z._default(/* @__PURE__ */ distinct(GroupName), []),
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

/** The grant type of the device authorization grant (RFC 8628 §3.4). */
export const DEVICE_CODE_GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:device_code';

/** Grant types a client may be allowed. @example GrantType.parse('client_credentials') */
export const GrantType = /* @__PURE__ */ z.enum([
  'authorization_code',
  'refresh_token',
  'client_credentials',
  'password',
  DEVICE_CODE_GRANT_TYPE,
]);
export type GrantType = z.infer<typeof GrantType>;

// RFC 8252 §7.3: plain http is acceptable only for a redirect to the loopback interface.
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * A redirect URI as RFC 6749 §3.1.2 and RFC 8252 require: absolute, without a fragment, https
 * (http only for the loopback interface). Post-logout redirect URIs take the same checks: they too
 * send the browser, with `state`, to the client. Kept exactly as given.
 * @example RedirectUri.parse('http://127.0.0.1:8400/callback')
 */
export const RedirectUri = /* @__PURE__ */ checked(
  /* @__PURE__ */ z.string(),
  /* @__PURE__ */ z.superRefine((raw, ctx) => {
    const problem = redirectUriProblem(raw);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
  }),
);

function redirectUriProblem(raw: string): string | undefined {
  if (/\s/.test(raw)) return 'must not contain whitespace';
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute URL';
  }
  if (raw.includes('#')) return 'must not have a fragment (RFC 6749 §3.1.2)';
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname)) return undefined;
  return 'must use https (http is allowed only for localhost, 127.0.0.1 or [::1], RFC 8252 §7.3)';
}

/** A scope token (RFC 6749 §3.3): printable ASCII without space, `"` or `\`. @example ScopeToken.parse('openid') */
export const ScopeToken = /* @__PURE__ */ checked(
  /* @__PURE__ */ z.string(),
  /* @__PURE__ */ z.regex(/^[\x21\x23-\x5b\x5d-\x7e]+$/, 'not a valid scope (RFC 6749 §3.3)'),
);

/** A lifetime in whole seconds. */
const Seconds = /* @__PURE__ */ checked(
  /* @__PURE__ */ z.int({ error: 'must be a positive whole number of seconds' }),
  /* @__PURE__ */ z.positive('must be a positive whole number of seconds'),
);

/**
 * What registering an OAuth client takes. Lists are kept once each; what is left out gets a
 * default when the client is registered (grant types by whether it is public, the standard
 * scopes, the configured token lifetime).
 * @example RegisterClientInput.parse({ name: 'CI', grantTypes: ['client_credentials'], audiences: ['https://api.example.com'] })
 */
export const RegisterClientInput = /* @__PURE__ */ z.strictObject({
  name: Label,
  grantTypes: /* @__PURE__ */ z.optional(/* @__PURE__ */ distinct(GrantType)),
  redirectUris: /* @__PURE__ */ z._default(/* @__PURE__ */ distinct(RedirectUri), []),
  postLogoutRedirectUris: /* @__PURE__ */ z._default(/* @__PURE__ */ distinct(RedirectUri), []),
  scopes: /* @__PURE__ */ z.optional(/* @__PURE__ */ distinct(ScopeToken)),
  audiences: /* @__PURE__ */ z._default(
    /* @__PURE__ */ distinct(
      /* @__PURE__ */ checked(
        /* @__PURE__ */ z.string(),
        /* @__PURE__ */ z.regex(/^\S+$/, 'must be non-empty, without whitespace'),
      ),
    ),
    [],
  ),
  /** A public client (native or browser app) has no secret. */
  public: /* @__PURE__ */ z._default(/* @__PURE__ */ z.boolean(), false),
  /** A trusted client may use the password grant and skips consent. */
  trusted: /* @__PURE__ */ z._default(/* @__PURE__ */ z.boolean(), false),
  accessTokenTtl: /* @__PURE__ */ z.optional(Seconds),
  refreshTokenTtl: /* @__PURE__ */ z.optional(Seconds),
});
export type RegisterClientInput = z.infer<typeof RegisterClientInput>;

/** Signing algorithms idgate supports. @example SigningAlgorithm.parse('ES256') */
export const SigningAlgorithm = /* @__PURE__ */ z.enum(['RS256', 'ES256', 'EdDSA']);
export type SigningAlgorithm = z.infer<typeof SigningAlgorithm>;

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
 * An OAuth client as listed (never its secret or secret hash). `etag` is its version, for
 * `If-Match`; `previousSecretExpiresAt` says until when the secret replaced by the last rotation
 * is still accepted (null when none is).
 * @example OAuthClient.parse({ clientId: 'c', name: 'CI', public: false, trusted: true, redirectUris: [], postLogoutRedirectUris: [], grantTypes: ['client_credentials'], scopes: ['openid'], audiences: [], accessTokenTtl: 3600, refreshTokenTtl: 2592000, previousSecretExpiresAt: null, createdAt: '2026-01-01T00:00:00.000Z', etag: '"0123456789abcdef"' })
 */
export const OAuthClient = /* @__PURE__ */ z.object({
  clientId: /* @__PURE__ */ z.string(),
  name: /* @__PURE__ */ z.string(),
  public: /* @__PURE__ */ z.boolean(),
  trusted: /* @__PURE__ */ z.boolean(),
  redirectUris: /* @__PURE__ */ z.array(/* @__PURE__ */ z.string()),
  /** Where RP-Initiated Logout may send the browser afterwards. */
  postLogoutRedirectUris: /* @__PURE__ */ z.array(/* @__PURE__ */ z.string()),
  grantTypes: /* @__PURE__ */ z.array(GrantType),
  scopes: /* @__PURE__ */ z.array(/* @__PURE__ */ z.string()),
  audiences: /* @__PURE__ */ z.array(/* @__PURE__ */ z.string()),
  accessTokenTtl: /* @__PURE__ */ checked(/* @__PURE__ */ z.int(), /* @__PURE__ */ z.positive()),
  refreshTokenTtl: /* @__PURE__ */ checked(/* @__PURE__ */ z.int(), /* @__PURE__ */ z.positive()),
  previousSecretExpiresAt: /* @__PURE__ */ z.nullable(Timestamp),
  createdAt: Timestamp,
  etag: /* @__PURE__ */ z.string(),
});
export type OAuthClient = z.infer<typeof OAuthClient>;

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
 * What `idgate init --json` prints: the credentials it created, each shown only this once.
 * @example InitResult.parse({ issuer: 'http://localhost:8080/oauth', apiKey: 'idg_x_y', admin: { username: 'admin', password: 'p' }, client: { clientId: 'c', clientSecret: 's' } })
 */
export const InitResult = /* @__PURE__ */ z.strictObject({
  issuer: /* @__PURE__ */ z.string(),
  apiKey: /* @__PURE__ */ z.string(),
  admin: /* @__PURE__ */ z.strictObject({
    username: /* @__PURE__ */ z.string(),
    password: /* @__PURE__ */ z.string(),
  }),
  client: /* @__PURE__ */ z.strictObject({
    clientId: /* @__PURE__ */ z.string(),
    clientSecret: /* @__PURE__ */ z.string(),
  }),
});
export type InitResult = z.infer<typeof InitResult>;

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
// ---------------------------------------------------------------------------------------------
// Users and groups over the admin API (`/admin/v1/users`, `/admin/v1/groups`).

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
  groups: /* @__PURE__ */ z.optional(/* @__PURE__ */ distinct(GroupName)),
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

/**
 * A group as listed: groups are the union of users' groups; `members` counts the users in it.
 * @example Group.parse({ name: 'dev', members: 3 })
 */
export const Group = /* @__PURE__ */ z.object({
  name: /* @__PURE__ */ z.string(),
  members: /* @__PURE__ */ checked(/* @__PURE__ */ z.int(), /* @__PURE__ */ z.nonnegative()),
});
export type Group = z.infer<typeof Group>;
