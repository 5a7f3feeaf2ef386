import * as z from 'zod/mini';
import { checked } from './checked.js';

/**
 * An identity provider's name: the `{callback}` path segment of `/oauth/callback/{callback}` and of
 * `/oauth/login/{idp}`. Lower-case letters, digits and `-`, 1–63 characters, starting with a
 * letter; unique regardless of case.
 * @example IdentityProviderName.parse('corp-sso')
 */
export const IdentityProviderName = /* @__PURE__ */ checked(
  /* @__PURE__ */ z.string(),
  /* @__PURE__ */ z.minLength(1),
  /* @__PURE__ */ z.maxLength(63),
  /* @__PURE__ */ z.regex(
    /^[a-z][a-z0-9-]*$/,
    'must be lower-case letters, digits and -, starting with a letter',
  ),
);

/**
 * How an external identity becomes a local user: `auto` creates a user on first sign-in, `lookup`
 * only signs in identities already linked (or, with `linkByVerifiedEmail`, users whose email the
 * provider verified), `manual` only identities an administrator linked.
 * @example MappingMethod.parse('auto')
 */
export const MappingMethod = /* @__PURE__ */ z.enum(['auto', 'lookup', 'manual']);
export type MappingMethod = z.infer<typeof MappingMethod>;

const HttpUrl = /* @__PURE__ */ z.url({ protocol: /^https?$/ });
const Secret = /* @__PURE__ */ checked(
  /* @__PURE__ */ z.string(),
  /* @__PURE__ */ z.minLength(1),
  /* @__PURE__ */ z.maxLength(4096),
);

const ProviderBase = /* @__PURE__ */ z.strictObject({
  name: IdentityProviderName,
  displayName: /* @__PURE__ */ z.optional(
    /* @__PURE__ */ checked(
      /* @__PURE__ */ z.string(),
      /* @__PURE__ */ z.minLength(1),
      /* @__PURE__ */ z.maxLength(128),
    ),
  ),
  mapping: /* @__PURE__ */ z._default(MappingMethod, 'auto'),
  linkByVerifiedEmail: /* @__PURE__ */ z._default(/* @__PURE__ */ z.boolean(), false),
  disabled: /* @__PURE__ */ z._default(/* @__PURE__ */ z.boolean(), false),
  /** The client that tokens answered straight from the callback (no authorize request) are issued to. */
  tokenClientId: /* @__PURE__ */ z.optional(
    /* @__PURE__ */ checked(
      /* @__PURE__ */ z.string(),
      /* @__PURE__ */ z.minLength(1),
      /* @__PURE__ */ z.maxLength(256),
    ),
  ),
  /**
   * Put before every group the provider reports; defaults to `<name>:` so that an upstream group
   * can never pose as a local one (or as Kubernetes' `system:` groups). `""` keeps names as given.
   */
  groupsPrefix: /* @__PURE__ */ z.optional(
    /* @__PURE__ */ checked(/* @__PURE__ */ z.string(), /* @__PURE__ */ z.maxLength(64)),
  ),
});

/**
 * The upstream `amr` values (RFC 8176, such as `mfa`, `hwk`, `otp`) and `acr` values that count
 * as a second factor: a sign-in whose verified upstream ID token has one of them in its `amr`, or
 * one of them as its `acr`, is an MFA sign-in at idgate too. Empty: never trusted.
 * @example UpstreamMfaValues.parse(['mfa', 'hwk', 'urn:example:acr:mfa'])
 */
const UpstreamMfaValues = /* @__PURE__ */ checked(
  /* @__PURE__ */ z.array(
    /* @__PURE__ */ checked(
      /* @__PURE__ */ z.string(),
      /* @__PURE__ */ z.minLength(1),
      /* @__PURE__ */ z.maxLength(256),
      /* @__PURE__ */ z.regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces'),
    ),
  ),
  /* @__PURE__ */ z.maxLength(32),
);

/**
 * Whether the provider's word that an email is verified (OIDC `email_verified`, GitHub's verified
 * primary email, GitLab's confirmed account) goes on into idgate's tokens as `email_verified: true`
 * for a user whose email is that one. Default false: idgate then says `false`, as it verifies no
 * address itself.
 */
const TrustEmailVerified = {
  trustEmailVerified: /* @__PURE__ */ z._default(/* @__PURE__ */ z.boolean(), false),
};

/** What an OpenID Connect provider may be trusted for, of its verified ID token. */
const UpstreamTrust = {
  /** See {@link UpstreamMfaValues}. */
  trustUpstreamMfa: /* @__PURE__ */ z._default(UpstreamMfaValues, () => []),
};

/**
 * What idgate asks an upstream OpenID Connect provider for unless told otherwise: `groups` too,
 * since group claims are what Kubernetes authorizes on.
 * @example const scopes = [...DEFAULT_OIDC_SCOPES]; // openid profile email groups
 */
export const DEFAULT_OIDC_SCOPES = ['openid', 'profile', 'email', 'groups'] as const;

/** Claim names of an upstream OIDC provider. */
export const OidcClaimNames = /* @__PURE__ */ z.strictObject({
  username: /* @__PURE__ */ z._default(
    /* @__PURE__ */ checked(/* @__PURE__ */ z.string(), /* @__PURE__ */ z.minLength(1)),
    'preferred_username',
  ),
  email: /* @__PURE__ */ z._default(
    /* @__PURE__ */ checked(/* @__PURE__ */ z.string(), /* @__PURE__ */ z.minLength(1)),
    'email',
  ),
  groups: /* @__PURE__ */ z._default(
    /* @__PURE__ */ checked(/* @__PURE__ */ z.string(), /* @__PURE__ */ z.minLength(1)),
    'groups',
  ),
  name: /* @__PURE__ */ z._default(
    /* @__PURE__ */ checked(/* @__PURE__ */ z.string(), /* @__PURE__ */ z.minLength(1)),
    'name',
  ),
});

/**
 * An upstream OpenID Connect provider, found by discovery from its issuer.
 * @example OidcProviderConfig.parse({ type: 'oidc', name: 'corp', issuer: 'https://sso.example.com', clientId: 'idgate', clientSecret: 's' })
 */
export const OidcProviderConfig = /* @__PURE__ */ z.extend(ProviderBase, {
  type: /* @__PURE__ */ z.literal('oidc'),
  issuer: HttpUrl,
  clientId: /* @__PURE__ */ checked(
    /* @__PURE__ */ z.string(),
    /* @__PURE__ */ z.minLength(1),
    /* @__PURE__ */ z.maxLength(256),
  ),
  clientSecret: Secret,
  scopes: /* @__PURE__ */ z._default(
    /* @__PURE__ */ z.array(
      /* @__PURE__ */ checked(/* @__PURE__ */ z.string(), /* @__PURE__ */ z.minLength(1)),
    ),
    () => [...DEFAULT_OIDC_SCOPES],
  ),
  claims: /* @__PURE__ */ z.prefault(OidcClaimNames, {}),
  /** Also read the upstream userinfo endpoint after the code exchange. */
  useUserinfo: /* @__PURE__ */ z._default(/* @__PURE__ */ z.boolean(), false),
  ...UpstreamTrust,
  ...TrustEmailVerified,
});

/**
 * A GitHub (or GitHub Enterprise) OAuth app.
 * @example GitHubProviderConfig.parse({ type: 'github', name: 'github', clientId: 'Iv1.x', clientSecret: 's', allowedOrganizations: ['acme'] })
 */
export const GitHubProviderConfig = /* @__PURE__ */ z.extend(ProviderBase, {
  type: /* @__PURE__ */ z.literal('github'),
  clientId: /* @__PURE__ */ checked(
    /* @__PURE__ */ z.string(),
    /* @__PURE__ */ z.minLength(1),
    /* @__PURE__ */ z.maxLength(256),
  ),
  clientSecret: Secret,
  /** Where users authorize: `https://github.com` or the GitHub Enterprise host. */
  baseUrl: /* @__PURE__ */ z._default(HttpUrl, 'https://github.com'),
  /** The REST API: `https://api.github.com` or `https://HOST/api/v3`. */
  apiUrl: /* @__PURE__ */ z._default(HttpUrl, 'https://api.github.com'),
  /** When set, only members of these organizations may sign in. */
  allowedOrganizations: /* @__PURE__ */ z._default(
    /* @__PURE__ */ z.array(
      /* @__PURE__ */ checked(/* @__PURE__ */ z.string(), /* @__PURE__ */ z.minLength(1)),
    ),
    [],
  ),
  /** Groups are `org` and `org:team-slug` for every team membership. */
  loadTeams: /* @__PURE__ */ z._default(/* @__PURE__ */ z.boolean(), true),
  ...TrustEmailVerified,
});

/**
 * A GitLab (gitlab.com or self-hosted) OAuth application.
 * @example GitLabProviderConfig.parse({ type: 'gitlab', name: 'gitlab', clientId: 'x', clientSecret: 's', baseUrl: 'https://gitlab.example.com' })
 */
export const GitLabProviderConfig = /* @__PURE__ */ z.extend(ProviderBase, {
  type: /* @__PURE__ */ z.literal('gitlab'),
  clientId: /* @__PURE__ */ checked(
    /* @__PURE__ */ z.string(),
    /* @__PURE__ */ z.minLength(1),
    /* @__PURE__ */ z.maxLength(256),
  ),
  clientSecret: Secret,
  baseUrl: /* @__PURE__ */ z._default(HttpUrl, 'https://gitlab.com'),
  /** When set, only members of these groups (full paths) may sign in. */
  allowedGroups: /* @__PURE__ */ z._default(
    /* @__PURE__ */ z.array(
      /* @__PURE__ */ checked(/* @__PURE__ */ z.string(), /* @__PURE__ */ z.minLength(1)),
    ),
    [],
  ),
  ...TrustEmailVerified,
});

/**
 * An LDAP directory used as a password provider (no redirect): from the login page and the
 * password grant's `provider` parameter.
 * @example LdapProviderConfig.parse({ type: 'ldap', name: 'corp-ldap', url: 'ldaps://ldap.example.com', userSearch: { baseDn: 'ou=people,dc=example,dc=com' } })
 */
export const LdapProviderConfig = /* @__PURE__ */ z.extend(ProviderBase, {
  type: /* @__PURE__ */ z.literal('ldap'),
  url: /* @__PURE__ */ checked(
    /* @__PURE__ */ z.string(),
    /* @__PURE__ */ z.regex(
      /^ldaps?:\/\/([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(:\d{1,5})?\/?$/,
      'must be ldap://host[:port] or ldaps://host[:port]',
    ),
  ),
  startTls: /* @__PURE__ */ z._default(/* @__PURE__ */ z.boolean(), false),
  /** PEM of the CA that signed the directory's certificate (LDAPS or StartTLS). */
  caCertificate: /* @__PURE__ */ z.optional(
    /* @__PURE__ */ checked(/* @__PURE__ */ z.string(), /* @__PURE__ */ z.minLength(1)),
  ),
  /** Manager bind; omit both for an anonymous search bind. */
  bindDn: /* @__PURE__ */ z.optional(
    /* @__PURE__ */ checked(/* @__PURE__ */ z.string(), /* @__PURE__ */ z.minLength(1)),
  ),
  bindPassword: /* @__PURE__ */ z.optional(Secret),
  timeoutMs: /* @__PURE__ */ z._default(
    /* @__PURE__ */ checked(
      /* @__PURE__ */ z.int(),
      /* @__PURE__ */ z.gte(100),
      /* @__PURE__ */ z.lte(60_000),
    ),
    5_000,
  ),
  userSearch: /* @__PURE__ */ z.strictObject({
    baseDn: /* @__PURE__ */ checked(/* @__PURE__ */ z.string(), /* @__PURE__ */ z.minLength(1)),
    /** `{username}` is replaced by the escaped username (RFC 4515). */
    filter: /* @__PURE__ */ z._default(
      /* @__PURE__ */ checked(/* @__PURE__ */ z.string(), /* @__PURE__ */ z.minLength(1)),
      '(uid={username})',
    ),
    scope: /* @__PURE__ */ z._default(/* @__PURE__ */ z.enum(['base', 'one', 'sub']), 'sub'),
    usernameAttribute: /* @__PURE__ */ z._default(
      /* @__PURE__ */ checked(/* @__PURE__ */ z.string(), /* @__PURE__ */ z.minLength(1)),
      'uid',
    ),
    emailAttribute: /* @__PURE__ */ z._default(
      /* @__PURE__ */ checked(/* @__PURE__ */ z.string(), /* @__PURE__ */ z.minLength(1)),
      'mail',
    ),
    nameAttribute: /* @__PURE__ */ z._default(
      /* @__PURE__ */ checked(/* @__PURE__ */ z.string(), /* @__PURE__ */ z.minLength(1)),
      'cn',
    ),
    /** The attribute that identifies the user for good (falls back to the DN). */
    idAttribute: /* @__PURE__ */ z._default(
      /* @__PURE__ */ checked(/* @__PURE__ */ z.string(), /* @__PURE__ */ z.minLength(1)),
      'entryUUID',
    ),
  }),
  groupSearch: /* @__PURE__ */ z.optional(
    /* @__PURE__ */ z.strictObject({
      baseDn: /* @__PURE__ */ checked(/* @__PURE__ */ z.string(), /* @__PURE__ */ z.minLength(1)),
      /** `{dn}` and `{username}` are replaced by the escaped values. */
      filter: /* @__PURE__ */ z._default(
        /* @__PURE__ */ checked(/* @__PURE__ */ z.string(), /* @__PURE__ */ z.minLength(1)),
        '(member={dn})',
      ),
      scope: /* @__PURE__ */ z._default(/* @__PURE__ */ z.enum(['base', 'one', 'sub']), 'sub'),
      nameAttribute: /* @__PURE__ */ z._default(
        /* @__PURE__ */ checked(/* @__PURE__ */ z.string(), /* @__PURE__ */ z.minLength(1)),
        'cn',
      ),
    }),
  ),
});

/**
 * The configuration of an identity provider, as the CLI, the admin API and the YAML file take it.
 * @example IdentityProviderConfig.parse({ type: 'gitlab', name: 'gitlab', clientId: 'x', clientSecret: 's' })
 */
export const IdentityProviderConfig = /* @__PURE__ */ z.discriminatedUnion('type', [
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
export const IdentityProvider = /* @__PURE__ */ z.object({
  name: /* @__PURE__ */ z.string(),
  type: /* @__PURE__ */ z.enum(['oidc', 'github', 'gitlab', 'ldap']),
  source: /* @__PURE__ */ z.enum(['config', 'database']),
  config: /* @__PURE__ */ z.record(/* @__PURE__ */ z.string(), /* @__PURE__ */ z.unknown()),
  createdAt: /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.iso.datetime({ offset: true })),
  /** When a stored provider last changed (null for one of the configuration file). */
  updatedAt: /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.iso.datetime({ offset: true })),
  etag: /* @__PURE__ */ z.string(),
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
export const IdentityProviderPatch = /* @__PURE__ */ z.record(
  /* @__PURE__ */ z.string(),
  /* @__PURE__ */ z.unknown(),
);
export type IdentityProviderPatch = z.infer<typeof IdentityProviderPatch>;

/**
 * An external identity linked to a local user.
 * @example LinkedIdentity.parse({ provider: 'github', subject: '583231', userId: 'u1', username: 'octocat', email: null, groups: ['acme'], linkedAt: '2026-01-01T00:00:00.000Z', lastLoginAt: null })
 */
export const LinkedIdentity = /* @__PURE__ */ z.object({
  provider: /* @__PURE__ */ z.string(),
  subject: /* @__PURE__ */ z.string(),
  userId: /* @__PURE__ */ z.string(),
  username: /* @__PURE__ */ z.string(),
  email: /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.string()),
  groups: /* @__PURE__ */ z.array(/* @__PURE__ */ z.string()),
  linkedAt: /* @__PURE__ */ z.iso.datetime({ offset: true }),
  lastLoginAt: /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.iso.datetime({ offset: true })),
});
export type LinkedIdentity = z.infer<typeof LinkedIdentity>;
