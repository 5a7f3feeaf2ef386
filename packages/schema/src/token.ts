import * as z from 'zod/mini';
import { DEVICE_CODE_GRANT_TYPE } from './admin/clients.js';
import { checked } from './checked.js';
import { TOKEN_EXCHANGE_GRANT_TYPE } from './trust.js';

/**
 * A successful token endpoint response (RFC 6749 §5.1, OIDC Core §3.1.3.3).
 * @example TokenResponse.parse({ access_token: 'eyJ...', token_type: 'Bearer', expires_in: 3600 })
 */
export const TokenResponse = /* @__PURE__ */ z.looseObject({
  access_token: /* @__PURE__ */ checked(/* @__PURE__ */ z.string(), /* @__PURE__ */ z.minLength(1)),
  token_type: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
  expires_in: /* @__PURE__ */ checked(/* @__PURE__ */ z.int32(), /* @__PURE__ */ z.nonnegative()),
  refresh_token: /* @__PURE__ */ z.optional(
    /* @__PURE__ */ checked(/* @__PURE__ */ z.string(), /* @__PURE__ */ z.minLength(1)),
  ),
  id_token: /* @__PURE__ */ z.optional(
    /* @__PURE__ */ checked(/* @__PURE__ */ z.string(), /* @__PURE__ */ z.minLength(1)),
  ),
  scope: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
  /** RFC 8693 §2.2.1: the type of the token issued by a token exchange. */
  issued_token_type: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
});
export type TokenResponse = z.infer<typeof TokenResponse>;

const ClientFields = {
  client_id: /* @__PURE__ */ z.optional(
    /* @__PURE__ */ checked(
      /* @__PURE__ */ z.string(),
      /* @__PURE__ */ z.minLength(1),
      /* @__PURE__ */ z.maxLength(256),
    ),
  ),
  client_secret: /* @__PURE__ */ z.optional(
    /* @__PURE__ */ checked(
      /* @__PURE__ */ z.string(),
      /* @__PURE__ */ z.minLength(1),
      /* @__PURE__ */ z.maxLength(1024),
    ),
  ),
};
const Scope = /* @__PURE__ */ z.optional(
  /* @__PURE__ */ checked(/* @__PURE__ */ z.string(), /* @__PURE__ */ z.maxLength(2048)),
);
const Resource = /* @__PURE__ */ z.optional(
  /* @__PURE__ */ z.union([
    /* @__PURE__ */ checked(/* @__PURE__ */ z.string(), /* @__PURE__ */ z.maxLength(2048)),
    /* @__PURE__ */ checked(
      /* @__PURE__ */ z.array(
        /* @__PURE__ */ checked(/* @__PURE__ */ z.string(), /* @__PURE__ */ z.maxLength(2048)),
      ),
      /* @__PURE__ */ z.maxLength(16),
    ),
  ]),
);

/**
 * Resource owner password credentials grant (RFC 6749 §4.3); idgate allows it for trusted clients.
 * @example PasswordGrantRequest.parse({ grant_type: 'password', username: 'alice', password: 's3cret' })
 */
export const PasswordGrantRequest = /* @__PURE__ */ z.extend(
  /* @__PURE__ */ z.object({
    grant_type: /* @__PURE__ */ z.literal('password'),
    username: /* @__PURE__ */ checked(
      /* @__PURE__ */ z.string(),
      /* @__PURE__ */ z.minLength(1),
      /* @__PURE__ */ z.maxLength(256),
    ),
    password: /* @__PURE__ */ checked(
      /* @__PURE__ */ z.string(),
      /* @__PURE__ */ z.minLength(1),
      /* @__PURE__ */ z.maxLength(1024),
    ),
    /** A password identity provider (LDAP) to check the credentials with, instead of local accounts. */
    provider: /* @__PURE__ */ z.optional(
      /* @__PURE__ */ checked(
        /* @__PURE__ */ z.string(),
        /* @__PURE__ */ z.minLength(1),
        /* @__PURE__ */ z.maxLength(63),
      ),
    ),
    scope: Scope,
    resource: Resource,
  }),
  ClientFields,
);
export type PasswordGrantRequest = z.infer<typeof PasswordGrantRequest>;

/**
 * Client credentials grant (RFC 6749 §4.4).
 * @example ClientCredentialsGrantRequest.parse({ grant_type: 'client_credentials', scope: 'tokenreview' })
 */
export const ClientCredentialsGrantRequest = /* @__PURE__ */ z.extend(
  /* @__PURE__ */ z.object({
    grant_type: /* @__PURE__ */ z.literal('client_credentials'),
    scope: Scope,
    resource: Resource,
  }),
  ClientFields,
);
export type ClientCredentialsGrantRequest = z.infer<typeof ClientCredentialsGrantRequest>;

/**
 * Authorization code grant (RFC 6749 §4.1.3, RFC 7636 §4.5).
 * @example AuthorizationCodeGrantRequest.parse({ grant_type: 'authorization_code', code: 'c', redirect_uri: 'https://app/cb', code_verifier: 'v'.repeat(43) })
 */
export const AuthorizationCodeGrantRequest = /* @__PURE__ */ z.extend(
  /* @__PURE__ */ z.object({
    grant_type: /* @__PURE__ */ z.literal('authorization_code'),
    code: /* @__PURE__ */ checked(
      /* @__PURE__ */ z.string(),
      /* @__PURE__ */ z.minLength(1),
      /* @__PURE__ */ z.maxLength(512),
    ),
    redirect_uri: /* @__PURE__ */ z.optional(
      /* @__PURE__ */ checked(
        /* @__PURE__ */ z.string(),
        /* @__PURE__ */ z.minLength(1),
        /* @__PURE__ */ z.maxLength(2048),
      ),
    ),
    code_verifier: /* @__PURE__ */ z.optional(
      /* @__PURE__ */ checked(
        /* @__PURE__ */ z.string(),
        /* @__PURE__ */ z.minLength(43),
        /* @__PURE__ */ z.maxLength(128),
      ),
    ),
    resource: Resource,
  }),
  ClientFields,
);
export type AuthorizationCodeGrantRequest = z.infer<typeof AuthorizationCodeGrantRequest>;

/**
 * Refresh token grant (RFC 6749 §6).
 * @example RefreshTokenGrantRequest.parse({ grant_type: 'refresh_token', refresh_token: 'r' })
 */
export const RefreshTokenGrantRequest = /* @__PURE__ */ z.extend(
  /* @__PURE__ */ z.object({
    grant_type: /* @__PURE__ */ z.literal('refresh_token'),
    refresh_token: /* @__PURE__ */ checked(
      /* @__PURE__ */ z.string(),
      /* @__PURE__ */ z.minLength(1),
      /* @__PURE__ */ z.maxLength(512),
    ),
    scope: Scope,
    /** RFC 8707: a token for another of the client's audiences (a second cluster) from the same grant. */
    resource: Resource,
  }),
  ClientFields,
);
export type RefreshTokenGrantRequest = z.infer<typeof RefreshTokenGrantRequest>;

/**
 * Device access token request (RFC 8628 §3.4): a device polls with the device code it was given.
 * @example DeviceCodeGrantRequest.parse({ grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: 'd', client_id: 'kubectl' })
 */
export const DeviceCodeGrantRequest = /* @__PURE__ */ z.extend(
  /* @__PURE__ */ z.object({
    grant_type: /* @__PURE__ */ z.literal(DEVICE_CODE_GRANT_TYPE),
    device_code: /* @__PURE__ */ checked(
      /* @__PURE__ */ z.string(),
      /* @__PURE__ */ z.minLength(1),
      /* @__PURE__ */ z.maxLength(512),
    ),
    resource: Resource,
  }),
  ClientFields,
);
export type DeviceCodeGrantRequest = z.infer<typeof DeviceCodeGrantRequest>;

/**
 * Token exchange request (RFC 8693 §2.1): a JWT from an issuer a trust names, for one cluster
 * (`audience` or `resource` naming it). Client authentication is optional (the subject token is the
 * credential); an `actor_token` (delegation) needs its `actor_token_type`.
 * @example TokenExchangeGrantRequest.parse({ grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange', subject_token: 'eyJ…', subject_token_type: 'urn:ietf:params:oauth:token-type:jwt', audience: 'prod' })
 */
export const TokenExchangeGrantRequest = /* @__PURE__ */ z.extend(
  /* @__PURE__ */ z.object({
    grant_type: /* @__PURE__ */ z.literal(TOKEN_EXCHANGE_GRANT_TYPE),
    subject_token: /* @__PURE__ */ checked(
      /* @__PURE__ */ z.string(),
      /* @__PURE__ */ z.minLength(1),
      /* @__PURE__ */ z.maxLength(16_384),
    ),
    subject_token_type: /* @__PURE__ */ checked(/* @__PURE__ */ z.string(), /* @__PURE__ */ z.maxLength(256)),
    actor_token: /* @__PURE__ */ z.optional(
      /* @__PURE__ */ checked(/* @__PURE__ */ z.string(), /* @__PURE__ */ z.maxLength(16_384)),
    ),
    actor_token_type: /* @__PURE__ */ z.optional(
      /* @__PURE__ */ checked(/* @__PURE__ */ z.string(), /* @__PURE__ */ z.maxLength(256)),
    ),
    requested_token_type: /* @__PURE__ */ z.optional(
      /* @__PURE__ */ checked(/* @__PURE__ */ z.string(), /* @__PURE__ */ z.maxLength(256)),
    ),
    audience: /* @__PURE__ */ z.optional(
      /* @__PURE__ */ checked(/* @__PURE__ */ z.string(), /* @__PURE__ */ z.maxLength(2048)),
    ),
    resource: Resource,
    scope: Scope,
    /** Seconds: a shorter lifetime than the trust allows (an idgate extension). */
    expires_in: /* @__PURE__ */ z.optional(
      /* @__PURE__ */ checked(/* @__PURE__ */ z.string(), /* @__PURE__ */ z.regex(/^[1-9][0-9]{0,5}$/)),
    ),
  }),
  ClientFields,
);
export type TokenExchangeGrantRequest = z.infer<typeof TokenExchangeGrantRequest>;

/**
 * Any token endpoint request idgate understands, discriminated by `grant_type`.
 * @example TokenRequest.parse({ grant_type: 'client_credentials' })
 */
export const TokenRequest = /* @__PURE__ */ z.discriminatedUnion('grant_type', [
  PasswordGrantRequest,
  ClientCredentialsGrantRequest,
  AuthorizationCodeGrantRequest,
  RefreshTokenGrantRequest,
  DeviceCodeGrantRequest,
  TokenExchangeGrantRequest,
]);
export type TokenRequest = z.infer<typeof TokenRequest>;
