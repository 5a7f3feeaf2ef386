import * as z from 'zod/mini';
import { Timestamp } from './admin/fields.js';
import { GroupName } from './admin/groups.js';
import { checked } from './checked.js';
import { ClusterName } from './cluster.js';

/** The grant type of OAuth 2.0 Token Exchange (RFC 8693 §2.1). */
export const TOKEN_EXCHANGE_GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:token-exchange';

/** The token types (RFC 8693 §3) idgate accepts as `subject_token_type` and `actor_token_type`: JWTs. */
export const SUBJECT_TOKEN_TYPES = [
  'urn:ietf:params:oauth:token-type:jwt',
  'urn:ietf:params:oauth:token-type:id_token',
  'urn:ietf:params:oauth:token-type:access_token',
] as const;

/** The `issued_token_type` of every exchange: an access token (RFC 8693 §3). */
export const ISSUED_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';

/** The longest lifetime a trust may allow: one day. */
export const MAX_TRUST_TTL = 86_400;

/**
 * A trust's name: 1–63 lower-case letters, digits and `-` (as a cluster's). Kept lower-cased.
 * @example TrustName.parse('GHA') // 'gha'
 */
export const TrustName = ClusterName;

/**
 * An issuer a trust names: an https URL (http only for a loopback host: tests and local issuers),
 * at most 2048 characters, without query or fragment.
 * @example TrustIssuer.parse('https://token.actions.githubusercontent.com')
 */
export const TrustIssuer = /* @__PURE__ */ checked(
  /* @__PURE__ */ z.string(),
  /* @__PURE__ */ z.maxLength(2048, 'must be at most 2048 characters'),
  /* @__PURE__ */ z.refine((value: string) => {
    try {
      const url = new URL(value);
      if (url.search !== '' || url.hash !== '') return false;
      if (url.protocol === 'https:') return true;
      return url.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
    } catch {
      return false;
    }
  }, 'must be an https URL without query or fragment (http only on a loopback host)'),
);

const JwkObject = /* @__PURE__ */ z.looseObject({ kty: /* @__PURE__ */ z.string() });

/**
 * A JSON Web Key Set (RFC 7517 §5) given inline, for an issuer idgate cannot reach; public keys only.
 * @example InlineJwks.parse({ keys: [{ kty: 'RSA', n: '…', e: 'AQAB', kid: 'k1' }] })
 */
export const InlineJwks = /* @__PURE__ */ z.object({
  keys: /* @__PURE__ */ checked(
    /* @__PURE__ */ z.array(JwkObject),
    /* @__PURE__ */ z.minLength(1, 'must hold at least one key'),
    /* @__PURE__ */ z.maxLength(32, 'must hold at most 32 keys'),
    /* @__PURE__ */ z.refine(
      (keys: Array<Record<string, unknown>>) =>
        keys.every((key) => key.d === undefined && key.k === undefined),
      'must hold public keys only (no d, no k)',
    ),
  ),
});
export type InlineJwks = z.infer<typeof InlineJwks>;

/**
 * How the resulting identity's username is made from the subject token's claims: `{claim}`
 * placeholders (top-level string or number claims) in fixed text. The result must hold a `:` (no
 * user of idgate has one, so it never names a user) and not start with `system:` or `client:`.
 * @example UsernameTemplate.parse('ci:{repository}')
 */
export const UsernameTemplate = /* @__PURE__ */ checked(
  /* @__PURE__ */ z.string(),
  /* @__PURE__ */ z.maxLength(256, 'must be at most 256 characters'),
  /* @__PURE__ */ z.regex(
    /^[^{}\s]*(\{[A-Za-z_][A-Za-z0-9_]*\}[^{}\s]*)*$/,
    'must be text with {claim} placeholders, without whitespace',
  ),
  /* @__PURE__ */ z.refine(
    (value: string) => value.replace(/\{[^}]*\}/g, '').includes(':'),
    'must hold a : outside its placeholders (ci:{repository}), so that it never names a user',
  ),
  /* @__PURE__ */ z.refine(
    (value: string) => !value.startsWith('system:') && !value.startsWith('client:'),
    'must not start with system: (Kubernetes reserves it) or client: (idgate clients)',
  ),
);

const Condition = /* @__PURE__ */ checked(
  /* @__PURE__ */ z.string(),
  /* @__PURE__ */ z.minLength(1, 'must not be empty'),
  /* @__PURE__ */ z.maxLength(4096, 'must be at most 4096 characters'),
);

const TrustTtl = /* @__PURE__ */ checked(
  /* @__PURE__ */ z.int({ error: 'must be a positive whole number of seconds' }),
  /* @__PURE__ */ z.positive('must be a positive whole number of seconds'),
  /* @__PURE__ */ z.lte(MAX_TRUST_TTL, `must be at most ${MAX_TRUST_TTL} seconds (one day)`),
);

const TrustAudience = /* @__PURE__ */ checked(
  /* @__PURE__ */ z.string(),
  /* @__PURE__ */ z.minLength(1, 'must not be empty'),
  /* @__PURE__ */ z.maxLength(2048, 'must be at most 2048 characters'),
);

const Groups = /* @__PURE__ */ checked(
  /* @__PURE__ */ z.array(GroupName),
  /* @__PURE__ */ z.maxLength(64, 'must hold at most 64 groups'),
);
const Clusters = /* @__PURE__ */ checked(
  /* @__PURE__ */ z.array(ClusterName),
  /* @__PURE__ */ z.minLength(1, 'must name at least one cluster'),
  /* @__PURE__ */ z.maxLength(64, 'must name at most 64 clusters'),
);

/**
 * What declaring a trust takes: the external issuer, the `aud` its tokens must carry, how its keys
 * are found (inline `jwks`, else `discoveryUrl`, else `{issuer}/.well-known/openid-configuration`),
 * a CEL `condition` over `claims` (none: every token of the issuer for the audience), the username
 * template, the groups, the clusters it may reach and the longest lifetime (`maxTtl`, seconds).
 * @example CreateTrustInput.parse({ name: 'gha', issuer: 'https://token.actions.githubusercontent.com', audience: 'idgate', condition: 'claims.repository == "acme/infra"', username: 'ci:{repository}', groups: ['ci-deployers'], clusters: ['prod'], maxTtl: 900 })
 */
export const CreateTrustInput = /* @__PURE__ */ z.strictObject({
  name: TrustName,
  issuer: TrustIssuer,
  audience: TrustAudience,
  jwks: /* @__PURE__ */ z.optional(InlineJwks),
  discoveryUrl: /* @__PURE__ */ z.optional(TrustIssuer),
  condition: /* @__PURE__ */ z.optional(Condition),
  username: UsernameTemplate,
  groups: /* @__PURE__ */ z._default(Groups, []),
  clusters: Clusters,
  maxTtl: TrustTtl,
});
export type CreateTrustInput = z.infer<typeof CreateTrustInput>;

/**
 * A change to a trust: any of its fields but the name; `null` clears `jwks`, `discoveryUrl` or
 * `condition`.
 * @example UpdateTrustInput.parse({ clusters: ['prod', 'staging'], condition: null })
 */
export const UpdateTrustInput = /* @__PURE__ */ z.strictObject({
  issuer: /* @__PURE__ */ z.optional(TrustIssuer),
  audience: /* @__PURE__ */ z.optional(TrustAudience),
  jwks: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.nullable(InlineJwks)),
  discoveryUrl: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.nullable(TrustIssuer)),
  condition: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.nullable(Condition)),
  username: /* @__PURE__ */ z.optional(UsernameTemplate),
  groups: /* @__PURE__ */ z.optional(Groups),
  clusters: /* @__PURE__ */ z.optional(Clusters),
  maxTtl: /* @__PURE__ */ z.optional(TrustTtl),
});
export type UpdateTrustInput = z.infer<typeof UpdateTrustInput>;

/**
 * A trust as listed: its fields, `jwks` when given inline.
 * @example Trust.parse({ name: 'gha', issuer: 'https://token.actions.githubusercontent.com', audience: 'idgate', jwks: null, discoveryUrl: null, condition: null, username: 'ci:{repository}', groups: [], clusters: ['prod'], maxTtl: 900, createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z' })
 */
export const Trust = /* @__PURE__ */ z.object({
  name: /* @__PURE__ */ z.string(),
  issuer: /* @__PURE__ */ z.string(),
  audience: /* @__PURE__ */ z.string(),
  jwks: /* @__PURE__ */ z.nullable(InlineJwks),
  discoveryUrl: /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.string()),
  condition: /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.string()),
  username: /* @__PURE__ */ z.string(),
  groups: /* @__PURE__ */ z.array(/* @__PURE__ */ z.string()),
  clusters: /* @__PURE__ */ z.array(/* @__PURE__ */ z.string()),
  maxTtl: /* @__PURE__ */ z.int(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type Trust = z.infer<typeof Trust>;

/**
 * A subject token to evaluate against a trust, and optionally the cluster it would be exchanged for.
 * @example TrustTestInput.parse({ token: 'eyJ…', cluster: 'prod' })
 */
export const TrustTestInput = /* @__PURE__ */ z.strictObject({
  token: /* @__PURE__ */ checked(
    /* @__PURE__ */ z.string(),
    /* @__PURE__ */ z.minLength(1, 'must not be empty'),
    /* @__PURE__ */ z.maxLength(16_384, 'must be at most 16384 characters'),
  ),
  cluster: /* @__PURE__ */ z.optional(ClusterName),
});
export type TrustTestInput = z.infer<typeof TrustTestInput>;

/**
 * What evaluating a subject token against a trust found, issuing nothing: whether it matched, the
 * rule that failed (`rule`, a code such as `audience`, `condition`, `expired`) with its wording,
 * the subject's issuer and subject, the CI-run claims, and the identity and clusters that would
 * result.
 * @example TrustEvaluation.parse({ trust: 'gha', matched: false, rule: 'condition', reason: 'the condition is false', issuer: 'https://token.actions.githubusercontent.com', subject: 'repo:acme/infra:ref:refs/heads/dev', run: {}, identity: null, clusters: [], maxTtl: null })
 */
export const TrustEvaluation = /* @__PURE__ */ z.object({
  trust: /* @__PURE__ */ z.string(),
  matched: /* @__PURE__ */ z.boolean(),
  rule: /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.string()),
  reason: /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.string()),
  issuer: /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.string()),
  subject: /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.string()),
  run: /* @__PURE__ */ z.record(/* @__PURE__ */ z.string(), /* @__PURE__ */ z.string()),
  identity: /* @__PURE__ */ z.nullable(
    /* @__PURE__ */ z.object({
      username: /* @__PURE__ */ z.string(),
      groups: /* @__PURE__ */ z.array(/* @__PURE__ */ z.string()),
    }),
  ),
  clusters: /* @__PURE__ */ z.array(/* @__PURE__ */ z.string()),
  /** The longest lifetime of a token issued now, seconds: the trust's, capped by the subject's remaining life. */
  maxTtl: /* @__PURE__ */ z.nullable(/* @__PURE__ */ z.int()),
});
export type TrustEvaluation = z.infer<typeof TrustEvaluation>;
