import { z } from 'zod';

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
  scope: z.string().optional(),
  sid: z.string().optional(),
  auth_time: z.int().optional(),
});
export type AccessTokenClaims = z.infer<typeof AccessTokenClaims>;

/**
 * A UserInfo response (OIDC Core §5.3.2): `sub` always, other claims by scope.
 * @example UserInfo.parse({ sub: 'u1', preferred_username: 'alice', groups: ['dev'] })
 */
export const UserInfo = z.looseObject({
  sub: z.string().min(1),
  name: z.string().optional(),
  preferred_username: z.string().optional(),
  email: z.string().optional(),
  email_verified: z.boolean().optional(),
  groups: z.array(z.string()).optional(),
});
export type UserInfo = z.infer<typeof UserInfo>;

/**
 * A token introspection response (RFC 7662 §2.2). Only `active` is required; an inactive token
 * carries nothing else.
 * @example IntrospectionResponse.parse({ active: false })
 */
export const IntrospectionResponse = z.looseObject({
  active: z.boolean(),
  scope: z.string().optional(),
  client_id: z.string().optional(),
  username: z.string().optional(),
  token_type: z.string().optional(),
  exp: z.int().optional(),
  iat: z.int().optional(),
  nbf: z.int().optional(),
  sub: z.string().optional(),
  aud: Audience.optional(),
  iss: z.string().optional(),
  jti: z.string().optional(),
  sid: z.string().optional(),
});
export type IntrospectionResponse = z.infer<typeof IntrospectionResponse>;
