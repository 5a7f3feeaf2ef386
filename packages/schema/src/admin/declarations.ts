import * as z from 'zod/mini';
import { checked } from '../checked.js';
import { ClusterAudience, ClusterName } from '../cluster.js';
import { IdentityProviderName } from '../identity-provider.js';
import { CreateTrustInput } from '../trust.js';
import { ApiKeyRole, ApiKeyScope } from './api-keys.js';
import { RegisterClientInput } from './clients.js';
import { DisplayName, distinct, Email, Label, Timestamp } from './fields.js';
import { GroupName } from './groups.js';
import { UserGroups, Username } from './users.js';

/**
 * Where a declared secret comes from — never the file itself: an environment variable (`env`) or
 * a file (`file`, its content with one trailing newline dropped, as Kubernetes secrets mount).
 * @example SecretReference.parse({ env: 'WEB_CLIENT_SECRET' })
 * @example SecretReference.parse({ file: '/run/secrets/web-client' })
 */
export const SecretReference = /* @__PURE__ */ z.union(
  [
    /* @__PURE__ */ z.strictObject({
      env: /* @__PURE__ */ checked(
        /* @__PURE__ */ z.string(),
        /* @__PURE__ */ z.regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name'),
      ),
    }),
    /* @__PURE__ */ z.strictObject({
      file: /* @__PURE__ */ checked(
        /* @__PURE__ */ z.string(),
        /* @__PURE__ */ z.minLength(1, 'must be a file path'),
      ),
    }),
  ],
  { error: 'must be a reference, { env: NAME } or { file: PATH }: a secret never goes in the file itself' },
);
export type SecretReference = z.infer<typeof SecretReference>;

/**
 * A declared client id: 1–128 letters, digits and `. _ ~ -` (the characters RFC 6749 allows
 * without escaping), so a relying party's configuration can name it before it exists.
 */
export const DeclaredClientId = /* @__PURE__ */ checked(
  /* @__PURE__ */ z.string(),
  /* @__PURE__ */ z.regex(/^[A-Za-z0-9._~-]{1,128}$/, 'must be 1 to 128 letters, digits and . _ ~ -'),
);

/**
 * A declared OAuth client: a registration ({@link RegisterClientInput}) with its `clientId`, and
 * for a confidential client its secret by reference.
 * @example DeclaredClient.parse({ clientId: 'web', name: 'Web', redirectUris: ['https://app.example.com/cb'], secret: { env: 'WEB_SECRET' } })
 */
export const DeclaredClient = /* @__PURE__ */ checked(
  /* @__PURE__ */ z.extend(RegisterClientInput, {
    clientId: DeclaredClientId,
    secret: /* @__PURE__ */ z.optional(SecretReference),
  }),
  /* @__PURE__ */ z.superRefine((client, ctx) => {
    if (client.public && client.secret !== undefined)
      ctx.addIssue({ code: 'custom', message: 'a public client has no secret', path: ['secret'] });
    if (!client.public && client.secret === undefined)
      ctx.addIssue({
        code: 'custom',
        message: 'a confidential client needs its secret by reference ({ env: NAME } or { file: PATH })',
        path: ['secret'],
      });
  }),
);
export type DeclaredClient = z.infer<typeof DeclaredClient>;

/**
 * A declared Kubernetes cluster: its name, audience (by default `kubernetes:<name>`) and whether
 * its tokens need a sign-in with a second factor (`requireMfa`, default false). Its webhook key
 * is an `apiKeys` entry.
 */
export const DeclaredCluster = /* @__PURE__ */ z.strictObject({
  name: ClusterName,
  audience: /* @__PURE__ */ z.optional(ClusterAudience),
  requireMfa: /* @__PURE__ */ z._default(/* @__PURE__ */ z.boolean(), false),
});
export type DeclaredCluster = z.infer<typeof DeclaredCluster>;

/**
 * A declared group, with or without members, and whether its members sign in with a second
 * factor (`requireMfa`, default false).
 */
export const DeclaredGroup = /* @__PURE__ */ z.strictObject({
  name: GroupName,
  description: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.nullable(DisplayName)),
  requireMfa: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.boolean()),
});
export type DeclaredGroup = z.infer<typeof DeclaredGroup>;

/**
 * A declared local user. The password, by reference, is set only when the user is created: people
 * change their own passwords, and a declaration never resets one.
 */
export const DeclaredUser = /* @__PURE__ */ z.strictObject({
  username: Username,
  email: /* @__PURE__ */ z._default(/* @__PURE__ */ z.nullable(Email), null),
  displayName: /* @__PURE__ */ z._default(/* @__PURE__ */ z.nullable(DisplayName), null),
  groups: /* @__PURE__ */ z._default(UserGroups, []),
  disabled: /* @__PURE__ */ z._default(/* @__PURE__ */ z.boolean(), false),
  password: /* @__PURE__ */ z.optional(SecretReference),
});
export type DeclaredUser = z.infer<typeof DeclaredUser>;

/**
 * A declared identity provider: the same fields as one in the configuration file's
 * `identityProviders`, with `clientSecret` and `bindPassword` by reference. Checked in full once
 * the references are read.
 */
export const DeclaredIdentityProvider = /* @__PURE__ */ z.looseObject({
  name: IdentityProviderName,
  type: /* @__PURE__ */ z.string(),
  clientSecret: /* @__PURE__ */ z.optional(SecretReference),
  bindPassword: /* @__PURE__ */ z.optional(SecretReference),
});
export type DeclaredIdentityProvider = z.infer<typeof DeclaredIdentityProvider>;

/**
 * A declared API key: its name (unique among declared keys), scopes and roles, optionally the
 * cluster a `tokenreview` key answers for, and the key itself by reference (made with
 * `idgate api-keys generate`). A changed key replaces the stored one.
 */
export const DeclaredApiKey = /* @__PURE__ */ checked(
  /* @__PURE__ */ z.strictObject({
    name: Label,
    scopes: /* @__PURE__ */ z.optional(/* @__PURE__ */ distinct(ApiKeyScope)),
    roles: /* @__PURE__ */ z.optional(/* @__PURE__ */ distinct(ApiKeyRole)),
    cluster: /* @__PURE__ */ z.optional(ClusterName),
    expiresAt: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.nullable(Timestamp)),
    key: SecretReference,
  }),
  /* @__PURE__ */ z.superRefine((key, ctx) => {
    if ((key.scopes?.length ?? 0) + (key.roles?.length ?? 0) === 0)
      ctx.addIssue({ code: 'custom', message: 'give at least one scope or role', path: ['scopes'] });
  }),
);
export type DeclaredApiKey = z.infer<typeof DeclaredApiKey>;

/** A declared trust of an external issuer (token exchange): the fields of `idgate trusts add`. */
export const DeclaredTrust = CreateTrustInput;
export type DeclaredTrust = z.infer<typeof DeclaredTrust>;

/**
 * Everything a declarations file (`idgate apply -f`) holds, each list of one kind of object.
 * @example Declarations.parse({ clusters: [{ name: 'prod' }], groups: [{ name: 'sre' }] })
 */
export const Declarations = /* @__PURE__ */ z.strictObject({
  clients: /* @__PURE__ */ z._default(/* @__PURE__ */ z.array(DeclaredClient), []),
  clusters: /* @__PURE__ */ z._default(/* @__PURE__ */ z.array(DeclaredCluster), []),
  groups: /* @__PURE__ */ z._default(/* @__PURE__ */ z.array(DeclaredGroup), []),
  users: /* @__PURE__ */ z._default(/* @__PURE__ */ z.array(DeclaredUser), []),
  identityProviders: /* @__PURE__ */ z._default(/* @__PURE__ */ z.array(DeclaredIdentityProvider), []),
  trusts: /* @__PURE__ */ z._default(/* @__PURE__ */ z.array(DeclaredTrust), []),
  apiKeys: /* @__PURE__ */ z._default(/* @__PURE__ */ z.array(DeclaredApiKey), []),
});
export type Declarations = z.infer<typeof Declarations>;

/** The fields of declarations whose values are secrets (or references to them): never quoted in an error. */
export const DECLARED_SECRET_FIELDS: readonly string[] = [
  'secret',
  'key',
  'password',
  'clientSecret',
  'bindPassword',
];

/** The kinds of declared objects, in the order they are created. */
export const DeclaredKind = /* @__PURE__ */ z.enum([
  'identity-provider',
  'client',
  'cluster',
  'trust',
  'group',
  'user',
  'api-key',
]);
export type DeclaredKind = z.infer<typeof DeclaredKind>;

/** A declaration manager's name: who owns the objects it declared (`--manager`). */
export const DeclarationManager = /* @__PURE__ */ checked(
  /* @__PURE__ */ z.string(),
  /* @__PURE__ */ z.regex(
    /^[a-z0-9][a-z0-9._-]{0,62}$/,
    'must be 1 to 63 lower-case letters, digits and . _ -',
  ),
);

/**
 * What `POST /admin/v1/declarations/apply` takes: the declarations, whether only to plan
 * (`dryRun`), whether to delete objects the manager declared before and no longer does (`prune`),
 * and the manager's name (default `apply`).
 */
export const ApplyDeclarationsInput = /* @__PURE__ */ z.strictObject({
  declarations: Declarations,
  dryRun: /* @__PURE__ */ z._default(/* @__PURE__ */ z.boolean(), false),
  prune: /* @__PURE__ */ z._default(/* @__PURE__ */ z.boolean(), false),
  manager: /* @__PURE__ */ z._default(DeclarationManager, 'apply'),
});
export type ApplyDeclarationsInput = z.infer<typeof ApplyDeclarationsInput>;

/** One field a planned change sets: its value before and after (`"[secret]"` for a secret). */
export const PlannedField = /* @__PURE__ */ z.object({
  field: /* @__PURE__ */ z.string(),
  before: /* @__PURE__ */ z.json(),
  after: /* @__PURE__ */ z.json(),
});
export type PlannedField = z.infer<typeof PlannedField>;

/**
 * One object's step in a plan. `drift` says it was changed by hand since it was last applied (the
 * step puts it back); `adopted` that it existed unmanaged and the manager takes it over.
 */
export const PlannedChange = /* @__PURE__ */ z.object({
  kind: DeclaredKind,
  name: /* @__PURE__ */ z.string(),
  action: /* @__PURE__ */ z.enum(['create', 'update', 'delete', 'unchanged']),
  drift: /* @__PURE__ */ z.boolean(),
  adopted: /* @__PURE__ */ z.boolean(),
  fields: /* @__PURE__ */ z.array(PlannedField),
});
export type PlannedChange = z.infer<typeof PlannedChange>;

/** What applying answers: each object's step, in the order taken, and how many of each there were. */
export const ApplyResult = /* @__PURE__ */ z.object({
  manager: /* @__PURE__ */ z.string(),
  dryRun: /* @__PURE__ */ z.boolean(),
  changes: /* @__PURE__ */ z.array(PlannedChange),
  summary: /* @__PURE__ */ z.object({
    create: /* @__PURE__ */ z.int(),
    update: /* @__PURE__ */ z.int(),
    delete: /* @__PURE__ */ z.int(),
    unchanged: /* @__PURE__ */ z.int(),
    drift: /* @__PURE__ */ z.int(),
  }),
});
export type ApplyResult = z.infer<typeof ApplyResult>;
