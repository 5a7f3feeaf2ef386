import * as z from 'zod/mini';

/** The two API versions of `authentication.k8s.io` that carry TokenReview. */
export const TOKEN_REVIEW_API_VERSIONS = [
  'authentication.k8s.io/v1',
  'authentication.k8s.io/v1beta1',
] as const;

/**
 * API version of a TokenReview object.
 * @example TokenReviewApiVersion.parse('authentication.k8s.io/v1')
 */
export const TokenReviewApiVersion = /* @__PURE__ */ z.enum(TOKEN_REVIEW_API_VERSIONS, {
  error: `must be ${TOKEN_REVIEW_API_VERSIONS.join(' or ')}`,
});
export type TokenReviewApiVersion = z.infer<typeof TokenReviewApiVersion>;

/**
 * `status.user` of a TokenReview (Kubernetes `UserInfo`).
 * @example TokenReviewUser.parse({ username: 'alice', uid: '42', groups: ['dev'], extra: { 'idgate.dev/scopes': ['openid'] } })
 */
export const TokenReviewUser = /* @__PURE__ */ z.object({
  username: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
  uid: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
  groups: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.array(/* @__PURE__ */ z.string())),
  extra: /* @__PURE__ */ z.optional(
    /* @__PURE__ */ z.record(/* @__PURE__ */ z.string(), /* @__PURE__ */ z.array(/* @__PURE__ */ z.string())),
  ),
});
export type TokenReviewUser = z.infer<typeof TokenReviewUser>;

/**
 * `spec` of a TokenReview: the bearer token and the audiences the caller accepts.
 * @example TokenReviewSpec.parse({ token: 'eyJ...', audiences: ['https://kubernetes.default.svc'] })
 */
export const TokenReviewSpec = /* @__PURE__ */ z.object({
  token: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
  audiences: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.array(/* @__PURE__ */ z.string())),
});
export type TokenReviewSpec = z.infer<typeof TokenReviewSpec>;

/**
 * `status` of a TokenReview: the authenticator's answer.
 * @example TokenReviewStatus.parse({ authenticated: false, error: 'token expired' })
 */
export const TokenReviewStatus = /* @__PURE__ */ z.object({
  authenticated: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.boolean()),
  user: /* @__PURE__ */ z.optional(TokenReviewUser),
  audiences: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.array(/* @__PURE__ */ z.string())),
  error: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
});
export type TokenReviewStatus = z.infer<typeof TokenReviewStatus>;

const ObjectMeta = /* @__PURE__ */ z.looseObject({});

/**
 * A TokenReview object as a kube-apiserver sends it to a webhook token authenticator
 * (`authentication.k8s.io/v1` or `v1beta1`).
 * @example
 * TokenReviewRequest.parse({
 *   apiVersion: 'authentication.k8s.io/v1',
 *   kind: 'TokenReview',
 *   spec: { token: 'eyJ...' },
 * });
 */
export const TokenReviewRequest = /* @__PURE__ */ z.object({
  apiVersion: TokenReviewApiVersion,
  kind: /* @__PURE__ */ z.literal('TokenReview', { error: 'must be TokenReview' }),
  metadata: /* @__PURE__ */ z.optional(ObjectMeta),
  spec: TokenReviewSpec,
  status: /* @__PURE__ */ z.optional(TokenReviewStatus),
});
export type TokenReviewRequest = z.infer<typeof TokenReviewRequest>;

/**
 * The TokenReview a webhook answers: the request's apiVersion and kind, with `status` filled in.
 * @example
 * TokenReviewResponse.parse({
 *   apiVersion: 'authentication.k8s.io/v1',
 *   kind: 'TokenReview',
 *   status: { authenticated: true, user: { username: 'alice', uid: 'u1', groups: ['dev'] } },
 * });
 */
export const TokenReviewResponse = /* @__PURE__ */ z.object({
  apiVersion: TokenReviewApiVersion,
  kind: /* @__PURE__ */ z.literal('TokenReview'),
  metadata: /* @__PURE__ */ z.optional(ObjectMeta),
  spec: /* @__PURE__ */ z.optional(TokenReviewSpec),
  status: TokenReviewStatus,
});
export type TokenReviewResponse = z.infer<typeof TokenReviewResponse>;
