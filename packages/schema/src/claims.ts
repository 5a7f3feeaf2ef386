import * as z from 'zod/mini';
import { checked } from './checked.js';

const Audience = /* @__PURE__ */ z.union([
  /* @__PURE__ */ z.string(),
  /* @__PURE__ */ z.array(/* @__PURE__ */ z.string()),
]);

/**
 * Claims of an idgate access token: a JWT profile for OAuth 2.0 access tokens (RFC 9068 §2.2),
 * header `typ: at+jwt`.
 * @example AccessTokenClaims.parse({ iss: 'https://id.example.com/oauth', sub: 'u1', aud: 'kubectl', exp: 2, iat: 1, jti: 'j', client_id: 'kubectl', scope: 'openid', sid: 'g1' })
 */
export const AccessTokenClaims = /* @__PURE__ */ z.looseObject({
  iss: /* @__PURE__ */ z.string(),
  sub: /* @__PURE__ */ z.string(),
  aud: Audience,
  exp: /* @__PURE__ */ z.int(),
  iat: /* @__PURE__ */ z.int(),
  jti: /* @__PURE__ */ z.string(),
  client_id: /* @__PURE__ */ z.string(),
  scope: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
  sid: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
  auth_time: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.int()),
});
export type AccessTokenClaims = z.infer<typeof AccessTokenClaims>;

/**
 * A UserInfo response (OIDC Core §5.3.2): `sub` always, other claims by scope.
 * @example UserInfo.parse({ sub: 'u1', preferred_username: 'alice', groups: ['dev'] })
 */
export const UserInfo = /* @__PURE__ */ z.looseObject({
  sub: /* @__PURE__ */ checked(/* @__PURE__ */ z.string(), /* @__PURE__ */ z.minLength(1)),
  name: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
  preferred_username: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
  email: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
  email_verified: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.boolean()),
  groups: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.array(/* @__PURE__ */ z.string())),
});
export type UserInfo = z.infer<typeof UserInfo>;

/**
 * A token introspection response (RFC 7662 §2.2). Only `active` is required; an inactive token
 * carries nothing else.
 * @example IntrospectionResponse.parse({ active: false })
 */
export const IntrospectionResponse = /* @__PURE__ */ z.looseObject({
  active: /* @__PURE__ */ z.boolean(),
  scope: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
  client_id: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
  username: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
  token_type: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
  exp: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.int()),
  iat: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.int()),
  nbf: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.int()),
  sub: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
  aud: /* @__PURE__ */ z.optional(Audience),
  iss: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
  jti: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
  sid: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
});
export type IntrospectionResponse = z.infer<typeof IntrospectionResponse>;
