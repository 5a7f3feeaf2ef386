import * as z from 'zod/mini';
import {
  ApiKey,
  GrantType,
  OAuthClient,
  RedirectUri,
  type RegisterClientInput,
  ScopeToken,
  SigningKeyInfo,
} from './admin.js';
import { checked } from './checked.js';

const Timestamp = /* @__PURE__ */ z.iso.datetime({ offset: true });

/** The distinct values of a list, in the order first given. */
const distinct = <T extends z.ZodMiniType>(item: T) =>
  /* @__PURE__ */ z.pipe(
    /* @__PURE__ */ z.array(item),
    /* @__PURE__ */ z.transform((values) => [...new Set(values)]),
  );

const Seconds = /* @__PURE__ */ checked(
  /* @__PURE__ */ z.int({ error: 'must be a positive whole number of seconds' }),
  /* @__PURE__ */ z.positive('must be a positive whole number of seconds'),
);

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
  audiences: /* @__PURE__ */ z.optional(
    /* @__PURE__ */ distinct(
      /* @__PURE__ */ checked(
        /* @__PURE__ */ z.string(),
        /* @__PURE__ */ z.regex(/^\S+$/, 'must be non-empty, without whitespace'),
      ),
    ),
  ),
  accessTokenTtl: /* @__PURE__ */ z.optional(Seconds),
  refreshTokenTtl: /* @__PURE__ */ z.optional(Seconds),
  trusted: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.boolean()),
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
 * An API key just created: the key as listed, and the key itself — shown only this once.
 * @example CreatedApiKey.parse({ ...apiKey, key: 'idg_ab12cd34_…' })
 */
export const CreatedApiKey = /* @__PURE__ */ z.extend(ApiKey, { key: /* @__PURE__ */ z.string() });
export type CreatedApiKey = z.infer<typeof CreatedApiKey>;

/**
 * What a signing key rotation did: the new key and the kids it retired.
 * @example SigningKeyRotation.parse({ created: { kid: 'k2', alg: 'RS256', state: 'active', createdAt: '2026-01-01T00:00:00.000Z', retiredAt: null, publishedUntil: null }, retired: ['k1'] })
 */
export const SigningKeyRotation = /* @__PURE__ */ z.object({
  created: SigningKeyInfo,
  retired: /* @__PURE__ */ z.array(/* @__PURE__ */ z.string()),
});
export type SigningKeyRotation = z.infer<typeof SigningKeyRotation>;

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
