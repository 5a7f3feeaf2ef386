import * as z from 'zod/mini';
import { checked } from '../checked.js';
import { Audience, distinct, Label, Seconds, Timestamp } from './fields.js';

/** The grant type of the device authorization grant (RFC 8628 §3.4). */
export const DEVICE_CODE_GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:device_code';

/** Grant types a client may be allowed. @example GrantType.parse('client_credentials') */
export const GrantType = /* @__PURE__ */ z.enum([
  'authorization_code',
  'refresh_token',
  'client_credentials',
  'password',
  DEVICE_CODE_GRANT_TYPE,
  'urn:ietf:params:oauth:grant-type:token-exchange',
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
  audiences: /* @__PURE__ */ z._default(/* @__PURE__ */ distinct(Audience), []),
  /** A public client (native or browser app) has no secret. */
  public: /* @__PURE__ */ z._default(/* @__PURE__ */ z.boolean(), false),
  /** A trusted client may use the password grant and skips consent. */
  trusted: /* @__PURE__ */ z._default(/* @__PURE__ */ z.boolean(), false),
  accessTokenTtl: /* @__PURE__ */ z.optional(Seconds),
  refreshTokenTtl: /* @__PURE__ */ z.optional(Seconds),
  /** Every sign-in for the client needs a second factor (the MFA `acr`); default false. */
  requireMfa: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.boolean()),
});
export type RegisterClientInput = z.infer<typeof RegisterClientInput>;

/**
 * An OAuth client as listed (never its secret or secret hash). `etag` is its version, for
 * `If-Match`; `previousSecretExpiresAt` says until when the secret replaced by the last rotation
 * is still accepted (null when none is).
 * @example OAuthClient.parse({ clientId: 'c', name: 'CI', public: false, trusted: true, redirectUris: [], postLogoutRedirectUris: [], grantTypes: ['client_credentials'], scopes: ['openid'], audiences: [], accessTokenTtl: 3600, refreshTokenTtl: 2592000, previousSecretExpiresAt: null, requireMfa: false, createdAt: '2026-01-01T00:00:00.000Z', etag: '"0123456789abcdef"' })
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
  /** Every sign-in for the client needs a second factor (the MFA `acr`); an idgate from before the setting leaves it out. */
  requireMfa: /* @__PURE__ */ z._default(/* @__PURE__ */ z.boolean(), false),
  createdAt: Timestamp,
  etag: /* @__PURE__ */ z.string(),
});
export type OAuthClient = z.infer<typeof OAuthClient>;

/** The longest grace period a rotated client secret may keep working: 30 days. */
export const MAX_SECRET_GRACE_PERIOD = 2_592_000;

/**
 * What changing an OAuth client takes (`PATCH /admin/v1/clients/{clientId}`): only the fields
 * given change; lists replace the whole list. The merged client is checked like a registration.
 * Whether a client is public cannot change (a secret would appear or vanish).
 * @example UpdateClientInput.parse({ redirectUris: ['https://app.example.com/callback'], trusted: false })
 */
export const UpdateClientInput = /* @__PURE__ */ z.strictObject({
  name: /* @__PURE__ */ z.optional(
    /* @__PURE__ */ checked(
      /* @__PURE__ */ z.string(),
      /* @__PURE__ */ z.trim(),
      /* @__PURE__ */ z.minLength(1, 'must not be empty'),
    ),
  ),
  redirectUris: /* @__PURE__ */ z.optional(/* @__PURE__ */ distinct(RedirectUri)),
  postLogoutRedirectUris: /* @__PURE__ */ z.optional(/* @__PURE__ */ distinct(RedirectUri)),
  grantTypes: /* @__PURE__ */ z.optional(/* @__PURE__ */ distinct(GrantType)),
  scopes: /* @__PURE__ */ z.optional(/* @__PURE__ */ distinct(ScopeToken)),
  audiences: /* @__PURE__ */ z.optional(/* @__PURE__ */ distinct(Audience)),
  accessTokenTtl: /* @__PURE__ */ z.optional(Seconds),
  refreshTokenTtl: /* @__PURE__ */ z.optional(Seconds),
  trusted: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.boolean()),
  requireMfa: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.boolean()),
});
export type UpdateClientInput = z.infer<typeof UpdateClientInput>;

/**
 * What rotating a client secret takes: how many seconds the secret being replaced keeps working
 * (0, the default, ends it at once; at most {@link MAX_SECRET_GRACE_PERIOD}).
 * @example RotateClientSecretInput.parse({ gracePeriod: 3600 })
 */
export const RotateClientSecretInput = /* @__PURE__ */ z.strictObject({
  gracePeriod: /* @__PURE__ */ z._default(
    /* @__PURE__ */ checked(
      /* @__PURE__ */ z.int({ error: 'must be a whole number of seconds from 0 to 2592000 (30 days)' }),
      /* @__PURE__ */ z.gte(0, 'must be a whole number of seconds from 0 to 2592000 (30 days)'),
      /* @__PURE__ */ z.lte(
        MAX_SECRET_GRACE_PERIOD,
        'must be a whole number of seconds from 0 to 2592000 (30 days)',
      ),
    ),
    0,
  ),
});
export type RotateClientSecretInput = z.infer<typeof RotateClientSecretInput>;

/**
 * A client just registered: the client and, for a confidential one, its secret — shown only this
 * once (idgate keeps a hash).
 * @example CreatedClient.parse({ ...client, clientSecret: 'q3…' })
 */
export const CreatedClient = /* @__PURE__ */ z.extend(OAuthClient, {
  clientSecret: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
});
export type CreatedClient = z.infer<typeof CreatedClient>;

/**
 * A client secret just rotated: the new secret, shown only this once, and until when the one it
 * replaced still works (null: not at all).
 * @example RotatedClientSecret.parse({ clientId: 'cl_abc', clientSecret: 'q3…', previousSecretExpiresAt: null })
 */
export const RotatedClientSecret = /* @__PURE__ */ z.object({
  clientId: /* @__PURE__ */ z.string(),
  clientSecret: /* @__PURE__ */ z.string(),
  previousSecretExpiresAt: /* @__PURE__ */ z.nullable(Timestamp),
});
export type RotatedClientSecret = z.infer<typeof RotatedClientSecret>;

/**
 * What a caller sends to register a client: {@link RegisterClientInput} before its defaults are
 * filled in (every field but `name` may be left out).
 * @example const request: RegisterClientRequest = { name: 'CI' };
 */
export type RegisterClientRequest = z.input<typeof RegisterClientInput>;

/**
 * What a caller sends to rotate a client secret: `gracePeriod` may be left out (0).
 * @example const request: RotateClientSecretRequest = { gracePeriod: 3600 };
 */
export type RotateClientSecretRequest = z.input<typeof RotateClientSecretInput>;
