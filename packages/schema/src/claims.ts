import * as z from 'zod/mini';
import { checked } from './checked.js';

const Audience = z.union([z.string(), z.array(z.string())]);

/**
 * Claims of an idgate access token: a JWT profile for OAuth 2.0 access tokens (RFC 9068 §2.2),
 * header `typ: at+jwt`.
 * @example AccessTokenClaims.parse({ iss: 'https://id.example.com/oauth', sub: 'u1', aud: 'kubectl', exp: 2, iat: 1, jti: 'j', client_id: 'kubectl', scope: 'openid', sid: 'g1' })
 */
export const AccessTokenClaims = z.looseObject({
  iss: z.string(),
  sub: z.string(),
  aud: Audience,
  exp: z.int(),
  iat: z.int(),
  jti: z.string(),
  client_id: z.string(),
  scope: z.optional(z.string()),
  sid: z.optional(z.string()),
  auth_time: z.optional(z.int()),
});
export type AccessTokenClaims = z.infer<typeof AccessTokenClaims>;

/**
 * A UserInfo response (OIDC Core §5.3.2): `sub` always, other claims by scope.
 * @example UserInfo.parse({ sub: 'u1', preferred_username: 'alice', groups: ['dev'] })
 */
export const UserInfo = z.looseObject({
  sub: checked(z.string(), z.minLength(1)),
  name: z.optional(z.string()),
  preferred_username: z.optional(z.string()),
  email: z.optional(z.string()),
  email_verified: z.optional(z.boolean()),
  groups: z.optional(z.array(z.string())),
});
export type UserInfo = z.infer<typeof UserInfo>;

/**
 * A token introspection response (RFC 7662 §2.2). Only `active` is required; an inactive token
 * carries nothing else.
 * @example IntrospectionResponse.parse({ active: false })
 */
export const IntrospectionResponse = z.looseObject({
  active: z.boolean(),
  scope: z.optional(z.string()),
  client_id: z.optional(z.string()),
  username: z.optional(z.string()),
  token_type: z.optional(z.string()),
  exp: z.optional(z.int()),
  iat: z.optional(z.int()),
  nbf: z.optional(z.int()),
  sub: z.optional(z.string()),
  aud: z.optional(Audience),
  iss: z.optional(z.string()),
  jti: z.optional(z.string()),
  sid: z.optional(z.string()),
});
export type IntrospectionResponse = z.infer<typeof IntrospectionResponse>;
