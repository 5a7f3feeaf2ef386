import * as z from 'zod/mini';
import { checked } from './checked.js';

/**
 * An identity provider's name: the `{callback}` path segment of `/oauth/callback/{callback}` and of
 * `/oauth/login/{idp}`. Lower-case letters, digits and `-`, 1–63 characters, starting with a
 * letter; unique regardless of case.
 * @example IdentityProviderName.parse('corp-sso')
 */
export const IdentityProviderName = checked(
  z.string(),
  z.minLength(1),
  z.maxLength(63),
  z.regex(/^[a-z][a-z0-9-]*$/, 'must be lower-case letters, digits and -, starting with a letter'),
);

/**
 * How an external identity becomes a local user: `auto` creates a user on first sign-in, `lookup`
 * only signs in identities already linked (or, with `linkByVerifiedEmail`, users whose email the
 * provider verified), `manual` only identities an administrator linked.
 * @example MappingMethod.parse('auto')
 */
export const MappingMethod = z.enum(['auto', 'lookup', 'manual']);
export type MappingMethod = z.infer<typeof MappingMethod>;

const HttpUrl = z.url({ protocol: /^https?$/ });
const Secret = checked(z.string(), z.minLength(1), z.maxLength(4096));

const Common = {
  name: IdentityProviderName,
  displayName: z.optional(checked(z.string(), z.minLength(1), z.maxLength(128))),
  mapping: z._default(MappingMethod, 'auto'),
  linkByVerifiedEmail: z._default(z.boolean(), false),
  disabled: z._default(z.boolean(), false),
  /** The client that tokens answered straight from the callback (no authorize request) are issued to. */
  tokenClientId: z.optional(checked(z.string(), z.minLength(1), z.maxLength(256))),
  /**
   * Put before every group the provider reports; defaults to `<name>:` so that an upstream group
   * can never pose as a local one (or as Kubernetes' `system:` groups). `""` keeps names as given.
   */
  groupsPrefix: z.optional(checked(z.string(), z.maxLength(64))),
};

/**
 * What idgate asks an upstream OpenID Connect provider for unless told otherwise: `groups` too,
 * since group claims are what Kubernetes authorizes on.
 * @example const scopes = [...DEFAULT_OIDC_SCOPES]; // openid profile email groups
 */
export const DEFAULT_OIDC_SCOPES = ['openid', 'profile', 'email', 'groups'] as const;

/** Claim names of an upstream OIDC provider. */
export const OidcClaimNames = z.strictObject({
  username: z._default(checked(z.string(), z.minLength(1)), 'preferred_username'),
  email: z._default(checked(z.string(), z.minLength(1)), 'email'),
  groups: z._default(checked(z.string(), z.minLength(1)), 'groups'),
  name: z._default(checked(z.string(), z.minLength(1)), 'name'),
});

/**
 * An upstream OpenID Connect provider, found by discovery from its issuer.
 * @example OidcProviderConfig.parse({ type: 'oidc', name: 'corp', issuer: 'https://sso.example.com', clientId: 'idgate', clientSecret: 's' })
 */
export const OidcProviderConfig = z.strictObject({
  ...Common,
  type: z.literal('oidc'),
  issuer: HttpUrl,
  clientId: checked(z.string(), z.minLength(1), z.maxLength(256)),
  clientSecret: Secret,
  scopes: z._default(z.array(checked(z.string(), z.minLength(1))), [...DEFAULT_OIDC_SCOPES]),
  claims: z.prefault(OidcClaimNames, {}),
  /** Also read the upstream userinfo endpoint after the code exchange. */
  useUserinfo: z._default(z.boolean(), false),
});

/**
 * A GitHub (or GitHub Enterprise) OAuth app.
 * @example GitHubProviderConfig.parse({ type: 'github', name: 'github', clientId: 'Iv1.x', clientSecret: 's', allowedOrganizations: ['acme'] })
 */
export const GitHubProviderConfig = z.strictObject({
  ...Common,
  type: z.literal('github'),
  clientId: checked(z.string(), z.minLength(1), z.maxLength(256)),
  clientSecret: Secret,
  /** Where users authorize: `https://github.com` or the GitHub Enterprise host. */
  baseUrl: z._default(HttpUrl, 'https://github.com'),
  /** The REST API: `https://api.github.com` or `https://HOST/api/v3`. */
  apiUrl: z._default(HttpUrl, 'https://api.github.com'),
  /** When set, only members of these organizations may sign in. */
  allowedOrganizations: z._default(z.array(checked(z.string(), z.minLength(1))), []),
  /** Groups are `org` and `org:team-slug` for every team membership. */
  loadTeams: z._default(z.boolean(), true),
});

/**
 * A GitLab (gitlab.com or self-hosted) OAuth application.
 * @example GitLabProviderConfig.parse({ type: 'gitlab', name: 'gitlab', clientId: 'x', clientSecret: 's', baseUrl: 'https://gitlab.example.com' })
 */
export const GitLabProviderConfig = z.strictObject({
  ...Common,
  type: z.literal('gitlab'),
  clientId: checked(z.string(), z.minLength(1), z.maxLength(256)),
  clientSecret: Secret,
  baseUrl: z._default(HttpUrl, 'https://gitlab.com'),
  /** When set, only members of these groups (full paths) may sign in. */
  allowedGroups: z._default(z.array(checked(z.string(), z.minLength(1))), []),
});

/**
 * An LDAP directory used as a password provider (no redirect): from the login page and the
 * password grant's `provider` parameter.
 * @example LdapProviderConfig.parse({ type: 'ldap', name: 'corp-ldap', url: 'ldaps://ldap.example.com', userSearch: { baseDn: 'ou=people,dc=example,dc=com' } })
 */
export const LdapProviderConfig = z.strictObject({
  ...Common,
  type: z.literal('ldap'),
  url: checked(
    z.string(),
    z.regex(
      /^ldaps?:\/\/([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(:\d{1,5})?\/?$/,
      'must be ldap://host[:port] or ldaps://host[:port]',
    ),
  ),
  startTls: z._default(z.boolean(), false),
  /** PEM of the CA that signed the directory's certificate (LDAPS or StartTLS). */
  caCertificate: z.optional(checked(z.string(), z.minLength(1))),
  /** Manager bind; omit both for an anonymous search bind. */
  bindDn: z.optional(checked(z.string(), z.minLength(1))),
  bindPassword: z.optional(Secret),
  timeoutMs: z._default(checked(z.int(), z.gte(100), z.lte(60_000)), 5_000),
  userSearch: z.strictObject({
    baseDn: checked(z.string(), z.minLength(1)),
    /** `{username}` is replaced by the escaped username (RFC 4515). */
    filter: z._default(checked(z.string(), z.minLength(1)), '(uid={username})'),
    scope: z._default(z.enum(['base', 'one', 'sub']), 'sub'),
    usernameAttribute: z._default(checked(z.string(), z.minLength(1)), 'uid'),
    emailAttribute: z._default(checked(z.string(), z.minLength(1)), 'mail'),
    nameAttribute: z._default(checked(z.string(), z.minLength(1)), 'cn'),
    /** The attribute that identifies the user for good (falls back to the DN). */
    idAttribute: z._default(checked(z.string(), z.minLength(1)), 'entryUUID'),
  }),
  groupSearch: z.optional(
    z.strictObject({
      baseDn: checked(z.string(), z.minLength(1)),
      /** `{dn}` and `{username}` are replaced by the escaped values. */
      filter: z._default(checked(z.string(), z.minLength(1)), '(member={dn})'),
      scope: z._default(z.enum(['base', 'one', 'sub']), 'sub'),
      nameAttribute: z._default(checked(z.string(), z.minLength(1)), 'cn'),
    }),
  ),
});

/**
 * The configuration of an identity provider, as the CLI, the admin API and the YAML file take it.
 * @example IdentityProviderConfig.parse({ type: 'gitlab', name: 'gitlab', clientId: 'x', clientSecret: 's' })
 */
export const IdentityProviderConfig = z.discriminatedUnion('type', [
  OidcProviderConfig,
  GitHubProviderConfig,
  GitLabProviderConfig,
  LdapProviderConfig,
]);
export type IdentityProviderConfig = z.infer<typeof IdentityProviderConfig>;
export type IdentityProviderConfigInput = z.input<typeof IdentityProviderConfig>;
export type OidcProviderConfig = z.infer<typeof OidcProviderConfig>;
export type GitHubProviderConfig = z.infer<typeof GitHubProviderConfig>;
export type GitLabProviderConfig = z.infer<typeof GitLabProviderConfig>;
export type LdapProviderConfig = z.infer<typeof LdapProviderConfig>;

/** The secret fields of each provider type, never shown once stored. */
export const IDENTITY_PROVIDER_SECRETS = ['clientSecret', 'bindPassword'] as const;

/**
 * An identity provider as listed: its configuration with secrets replaced by `"[set]"`, and where
 * it comes from (`config`: the YAML file, read-only; `database`: managed by CLI or admin API).
 * `etag` is its version (also the `ETag` header), for `If-Match` on an update; it changes with
 * every change, a rotated secret's included (`updatedAt` is part of it).
 * @example IdentityProvider.parse({ name: 'gitlab', type: 'gitlab', source: 'database', config: { clientSecret: '[set]' }, createdAt: null, updatedAt: null, etag: '"0123456789abcdef"' })
 */
export const IdentityProvider = z.object({
  name: z.string(),
  type: z.enum(['oidc', 'github', 'gitlab', 'ldap']),
  source: z.enum(['config', 'database']),
  config: z.record(z.string(), z.unknown()),
  createdAt: z.nullable(z.iso.datetime({ offset: true })),
  /** When a stored provider last changed (null for one of the configuration file). */
  updatedAt: z.nullable(z.iso.datetime({ offset: true })),
  etag: z.string(),
});
export type IdentityProvider = z.infer<typeof IdentityProvider>;

/**
 * A change to a stored identity provider, as a JSON merge patch (RFC 7396) of its configuration:
 * the fields given replace the stored ones (objects such as `claims` or `userSearch` merge field
 * by field), `null` removes an optional field, and the result is checked as a new provider's
 * configuration is. `name` and `type` cannot change (linked identities are keyed by the name); a
 * secret (`clientSecret`, `bindPassword`) given is a rotation, stored sealed and never shown.
 * @example IdentityProviderPatch.parse({ clientSecret: 'rotated', scopes: ['openid', 'groups'], displayName: null })
 */
export const IdentityProviderPatch = z.record(z.string(), z.unknown());
export type IdentityProviderPatch = z.infer<typeof IdentityProviderPatch>;

/**
 * An external identity linked to a local user.
 * @example LinkedIdentity.parse({ provider: 'github', subject: '583231', userId: 'u1', username: 'octocat', email: null, groups: ['acme'], linkedAt: '2026-01-01T00:00:00.000Z', lastLoginAt: null })
 */
export const LinkedIdentity = z.object({
  provider: z.string(),
  subject: z.string(),
  userId: z.string(),
  username: z.string(),
  email: z.nullable(z.string()),
  groups: z.array(z.string()),
  linkedAt: z.iso.datetime({ offset: true }),
  lastLoginAt: z.nullable(z.iso.datetime({ offset: true })),
});
export type LinkedIdentity = z.infer<typeof LinkedIdentity>;
