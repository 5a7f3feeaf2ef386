import { z } from 'zod';

const Timestamp = z.iso.datetime({ offset: true });

/**
 * A username: 1–128 characters of letters, digits and `. _ @ -`, starting with a letter or digit.
 * Usernames are unique regardless of case.
 * @example Username.parse('alice.smith@example.com')
 */
export const Username = z
  .string()
  .min(1)
  .max(128)
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9._@-]*$/,
    'may hold only letters, digits and . _ @ -, starting with a letter or digit',
  );

/**
 * A group name: 1–256 printable characters, no `system:` prefix (reserved by Kubernetes).
 * @example GroupName.parse('platform-admins')
 */
export const GroupName = z
  .string()
  .min(1)
  .max(256)
  .regex(/^[\x21-\x7e]+$/, 'may hold only printable ASCII characters without spaces')
  .refine((g) => !g.startsWith('system:'), 'must not start with "system:", which Kubernetes reserves');

/** Scopes an API key can carry. @example ApiKeyScope.parse('tokenreview') */
export const ApiKeyScope = z.enum(['tokenreview', 'admin']);
export type ApiKeyScope = z.infer<typeof ApiKeyScope>;

/** Grant types a client may be allowed. @example GrantType.parse('client_credentials') */
export const GrantType = z.enum(['authorization_code', 'refresh_token', 'client_credentials', 'password']);
export type GrantType = z.infer<typeof GrantType>;

/** Signing algorithms idgate supports. @example SigningAlgorithm.parse('ES256') */
export const SigningAlgorithm = z.enum(['RS256', 'ES256', 'EdDSA']);
export type SigningAlgorithm = z.infer<typeof SigningAlgorithm>;

/**
 * A user as the admin API and `idgate users list --json` show it (never its password hash).
 * @example User.parse({ id: 'u1', username: 'alice', email: null, displayName: null, groups: [], disabled: false, createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z' })
 */
export const User = z.object({
  id: z.string(),
  username: z.string(),
  email: z.string().nullable(),
  displayName: z.string().nullable(),
  groups: z.array(z.string()),
  disabled: z.boolean(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type User = z.infer<typeof User>;

/**
 * An OAuth client as listed (never its secret or secret hash).
 * @example OAuthClient.parse({ clientId: 'c', name: 'CI', public: false, trusted: true, redirectUris: [], postLogoutRedirectUris: [], grantTypes: ['client_credentials'], scopes: ['openid'], audiences: [], accessTokenTtl: 3600, refreshTokenTtl: 2592000, createdAt: '2026-01-01T00:00:00.000Z' })
 */
export const OAuthClient = z.object({
  clientId: z.string(),
  name: z.string(),
  public: z.boolean(),
  trusted: z.boolean(),
  redirectUris: z.array(z.string()),
  /** Where RP-Initiated Logout may send the browser afterwards. */
  postLogoutRedirectUris: z.array(z.string()),
  grantTypes: z.array(GrantType),
  scopes: z.array(z.string()),
  audiences: z.array(z.string()),
  accessTokenTtl: z.int().positive(),
  refreshTokenTtl: z.int().positive(),
  createdAt: Timestamp,
});
export type OAuthClient = z.infer<typeof OAuthClient>;

/**
 * An API key as listed: its public prefix, never the key or its hash.
 * @example ApiKey.parse({ id: 'k1', name: 'apiserver', prefix: 'idg_ab12cd34', scopes: ['tokenreview'], createdAt: '2026-01-01T00:00:00.000Z', lastUsedAt: null, revokedAt: null })
 */
export const ApiKey = z.object({
  id: z.string(),
  name: z.string(),
  prefix: z.string(),
  scopes: z.array(ApiKeyScope),
  createdAt: Timestamp,
  lastUsedAt: Timestamp.nullable(),
  revokedAt: Timestamp.nullable(),
});
export type ApiKey = z.infer<typeof ApiKey>;

/**
 * A signing key as listed: its state in the rotation, never private material.
 * @example SigningKeyInfo.parse({ kid: 'k1', alg: 'RS256', state: 'active', createdAt: '2026-01-01T00:00:00.000Z', retiredAt: null, publishedUntil: null })
 */
export const SigningKeyInfo = z.object({
  kid: z.string(),
  alg: SigningAlgorithm,
  state: z.enum(['active', 'retired', 'expired']),
  createdAt: Timestamp,
  retiredAt: Timestamp.nullable(),
  publishedUntil: Timestamp.nullable(),
});
export type SigningKeyInfo = z.infer<typeof SigningKeyInfo>;

/**
 * What `idgate init --json` prints: the credentials it created, each shown only this once.
 * @example InitResult.parse({ issuer: 'http://localhost:8080/oauth', apiKey: 'idg_x_y', admin: { username: 'admin', password: 'p' }, client: { client_id: 'c', client_secret: 's' } })
 */
export const InitResult = z.strictObject({
  issuer: z.string(),
  apiKey: z.string(),
  admin: z.strictObject({ username: z.string(), password: z.string() }),
  client: z.strictObject({ client_id: z.string(), client_secret: z.string() }),
});
export type InitResult = z.infer<typeof InitResult>;
