import * as z from 'zod/mini';
import { Timestamp } from './admin/fields.js';
import { checked } from './checked.js';

/**
 * A cluster's name: 1–63 lower-case letters, digits and `-`, starting and ending with a letter or
 * digit (a DNS label, as Kubernetes names things). Given in any case, kept lower-cased.
 * @example ClusterName.parse('Prod-EU') // 'prod-eu'
 */
export const ClusterName = /* @__PURE__ */ checked(
  /* @__PURE__ */ z.string(),
  /* @__PURE__ */ z.trim(),
  /* @__PURE__ */ z.toLowerCase(),
  /* @__PURE__ */ z.regex(
    /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/,
    'must be 1 to 63 letters, digits and -, starting and ending with a letter or digit',
  ),
);

/**
 * The audience of a cluster's tokens (their `aud`, asked for with RFC 8707 `resource`): an
 * absolute URI without whitespace or fragment, at most 2048 characters.
 * @example ClusterAudience.parse('kubernetes:prod-eu')
 */
export const ClusterAudience = /* @__PURE__ */ checked(
  /* @__PURE__ */ z.string(),
  /* @__PURE__ */ z.maxLength(2048, 'must be at most 2048 characters'),
  /* @__PURE__ */ z.regex(
    /^[A-Za-z][A-Za-z0-9+.-]*:[^\s#]+$/,
    'must be an absolute URI without whitespace or fragment (RFC 8707 §2)',
  ),
);

/** The audience a cluster gets unless told otherwise. @example defaultClusterAudience('prod') // 'kubernetes:prod' */
export function defaultClusterAudience(name: string): string {
  return `kubernetes:${name}`;
}

/**
 * What registering a Kubernetes cluster takes: its name and, optionally, its audience (by default
 * `kubernetes:<name>`).
 * @example CreateClusterInput.parse({ name: 'prod', audience: 'https://prod.k8s.example.com' })
 */
export const CreateClusterInput = /* @__PURE__ */ z.strictObject({
  name: ClusterName,
  audience: /* @__PURE__ */ z.optional(ClusterAudience),
  /** Tokens for the cluster need a sign-in with a second factor (`acr` urn:idgate:acr:mfa). Default false. */
  requireMfa: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.boolean()),
});
export type CreateClusterInput = z.infer<typeof CreateClusterInput>;

/**
 * A change of a cluster: a new name, a new audience and/or whether it requires a second factor. Its API keys stay bound to it (and
 * stay valid); TokenReview answers for the new audience from then on. At least one field.
 * @example UpdateClusterInput.parse({ audience: 'https://prod.k8s.example.com' })
 */
export const UpdateClusterInput = /* @__PURE__ */ checked(
  /* @__PURE__ */ z.strictObject({
    name: /* @__PURE__ */ z.optional(ClusterName),
    audience: /* @__PURE__ */ z.optional(ClusterAudience),
    requireMfa: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.boolean()),
  }),
  /* @__PURE__ */ z.refine(
    (input) => input.name !== undefined || input.audience !== undefined || input.requireMfa !== undefined,
    'must name at least one of name, audience, requireMfa',
  ),
);
export type UpdateClusterInput = z.infer<typeof UpdateClusterInput>;

/**
 * A Kubernetes cluster as listed: its audience, whether its tokens need a second factor, and the
 * id of the public client kubectl signs in with (one for every cluster; null when it was removed).
 * @example Cluster.parse({ name: 'prod', audience: 'kubernetes:prod', requireMfa: false, kubectlClientId: 'cl_abc', createdAt: '2026-01-01T00:00:00.000Z' })
 */
export const Cluster = /* @__PURE__ */ z.object({
  name: /* @__PURE__ */ z.string(),
  audience: /* @__PURE__ */ z.string(),
  requireMfa: /* @__PURE__ */ z.boolean(),
  kubectlClientId: /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.string()),
  createdAt: Timestamp,
});
export type Cluster = z.infer<typeof Cluster>;

/**
 * A cluster just registered: the cluster, and the `tokenreview` API key bound to it for the
 * kube-apiserver's webhook — shown only this once (idgate keeps a hash).
 * @example CreatedCluster.parse({ cluster: { name: 'prod', audience: 'kubernetes:prod', requireMfa: false, kubectlClientId: 'cl_abc', createdAt: '2026-01-01T00:00:00.000Z' }, apiKey: 'idg_ab12cd34_…', apiKeyId: 'k1', kubectlClientCreated: true })
 */
export const CreatedCluster = /* @__PURE__ */ z.object({
  cluster: Cluster,
  apiKey: /* @__PURE__ */ z.string(),
  apiKeyId: /* @__PURE__ */ z.string(),
  /** Whether this registration created the shared kubectl client. */
  kubectlClientCreated: /* @__PURE__ */ z.boolean(),
});
export type CreatedCluster = z.infer<typeof CreatedCluster>;
