import * as z from 'zod/mini';
import { checked } from './checked.js';

/**
 * The error codes idgate answers with on its OAuth/OIDC endpoints (RFC 6749 §4.1.2.1, §5.2;
 * RFC 6750 §3.1; RFC 7009 §2.2.1; RFC 8707 §2; RFC 8628 §3.5; OIDC Core §3.1.2.6). A closed union a caller can `switch` on.
 * @example OAuthErrorCode.parse('invalid_grant')
 */
export const OAuthErrorCode = /* @__PURE__ */ z.enum([
  'invalid_request',
  'invalid_client',
  'invalid_grant',
  'unauthorized_client',
  'unsupported_grant_type',
  'unsupported_response_type',
  'unsupported_token_type',
  'invalid_scope',
  'access_denied',
  'server_error',
  'temporarily_unavailable',
  'invalid_token',
  'insufficient_scope',
  'login_required',
  'consent_required',
  'interaction_required',
  'account_selection_required',
  'invalid_request_uri',
  'invalid_request_object',
  'request_not_supported',
  'request_uri_not_supported',
  'invalid_target',
  // RFC 8628 §3.5: the device authorization grant's polling answers.
  'authorization_pending',
  'slow_down',
  'expired_token',
]);
export type OAuthErrorCode = z.infer<typeof OAuthErrorCode>;

/**
 * An OAuth 2.0 error response body (RFC 6749 §5.2). `error` is any string on the wire so that
 * errors of other servers parse too; idgate itself only sends {@link OAuthErrorCode} values.
 * @example OAuthError.parse({ error: 'invalid_client', error_description: 'client authentication failed' })
 */
export const OAuthError = /* @__PURE__ */ z.looseObject({
  error: /* @__PURE__ */ checked(/* @__PURE__ */ z.string(), /* @__PURE__ */ z.minLength(1)),
  error_description: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
  error_uri: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
});
export type OAuthError = z.infer<typeof OAuthError>;

/**
 * The `code` of every RFC 9457 problem idgate answers with (the admin API, TokenReview, discovery,
 * and any route's request errors). A closed union a caller can `switch` on: a new code is a
 * change of this list, never a string made up where the error happens.
 * @example
 * switch (problem.code) {
 *   case 'api_key_invalid': return 'check the API key';
 *   case 'storage_unavailable': return 'try again shortly';
 * }
 */
export const ProblemCode = /* @__PURE__ */ z.enum([
  // The request itself.
  'invalid_request',
  'invalid_url',
  'invalid_body',
  'unsupported_media_type',
  'body_too_large',
  'not_found',
  'method_not_allowed',
  // Credentials.
  'api_key_missing',
  'api_key_invalid',
  'api_key_scope',
  'authorization_invalid',
  // TokenReview.
  'invalid_token_review',
  // The admin API: what is wrong with which object.
  'invalid_user',
  'invalid_identity',
  'invalid_client',
  'invalid_api_key',
  'invalid_identity_provider',
  'invalid_cluster',
  'invalid_trust',
  'user_not_found',
  'identity_not_found',
  'client_not_found',
  'api_key_not_found',
  'signing_key_not_found',
  'identity_provider_not_found',
  'cluster_not_found',
  'trust_not_found',
  'user_exists',
  'identity_exists',
  'client_exists',
  'api_key_exists',
  'identity_provider_exists',
  'identity_provider_read_only',
  'cluster_exists',
  'trust_exists',
  'client_read_only',
  'invalid_group',
  'invalid_session',
  'invalid_grant_id',
  'invalid_signing_key',
  // Retiring the only key that may sign, without making a new one in the same step.
  'last_signing_key',
  'invalid_not_before',
  'invalid_address',
  // Declarations (`idgate apply`): a bad file, and an object another manager owns.
  'invalid_declarations',
  'declaration_conflict',
  'group_not_found',
  'group_exists',
  // Deleting a group that still has members, without `force`.
  'group_has_members',
  'session_not_found',
  'grant_not_found',
  'factor_not_found',
  'weak_password',
  // A user in `LIMITS.groupsPerUser` groups already, put in one more.
  'too_many_groups',
  // Past `audit.stream.maxPerKey` or `maxPerProcess` live tails (429 with Retry-After).
  'too_many_streams',
  'conflict',
  // A conditional update (If-Match) whose ETag is no longer the object's.
  'precondition_failed',
  // An upstream identity provider (the codes of a connector's refusal).
  'upstream_error',
  'upstream_unavailable',
  'invalid_upstream_response',
  'not_allowed',
  'invalid_upstream_token',
  // The server: always with a generic detail.
  'storage_unavailable',
  'service_unavailable',
  'internal_error',
]);
export type ProblemCode = z.infer<typeof ProblemCode>;

/**
 * RFC 9457 problem details, as the admin API and the non-OAuth endpoints answer errors.
 * `code` is one of {@link ProblemCode}: a body with any other code is not an idgate problem.
 * @example Problem.parse({ type: 'about:blank', title: 'Unauthorized', status: 401, code: 'api_key_invalid' })
 */
export const Problem = /* @__PURE__ */ z.looseObject({
  type: /* @__PURE__ */ z._default(/* @__PURE__ */ z.string(), 'about:blank'),
  title: /* @__PURE__ */ z.string(),
  status: /* @__PURE__ */ checked(
    /* @__PURE__ */ z.int(),
    /* @__PURE__ */ z.gte(400),
    /* @__PURE__ */ z.lte(599),
  ),
  detail: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
  instance: /* @__PURE__ */ z.optional(/* @__PURE__ */ z.string()),
  code: ProblemCode,
});
export type Problem = z.infer<typeof Problem>;
