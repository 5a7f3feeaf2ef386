import type { ApiKeyRecord } from '@idgate/core';
import { describeFirstIssue, TokenReviewRequest, TokenReviewResponse } from '@idgate/schema';
import type { FastifyInstance } from 'fastify';
import type { z } from 'zod';
import { apiKeyAuthenticator } from '../../http/api-key-auth.js';
import { requestOrigin } from '../../http/caller.js';
import { sendProblem } from '../../http/errors.js';
import { type ResponseDoc, type RouteDoc, routeSchema } from '../../openapi/route-doc.js';
import { denialReason, recordTokenReview } from '../../telemetry/metrics.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The API key a TokenReview was authenticated with (its cluster binding decides the review). */
    reviewerKey: ApiKeyRecord | null;
  }
}

/**
 * RFC 9745: the endpoint is deprecated since this instant (idgate's first release; the
 * Kubernetes webhook contract keeps it alive).
 */
export const TOKEN_REVIEW_DEPRECATION = '@1795219200';

/**
 * The `Link` header (RFC 8288) every TokenReview answer carries beside `Deprecation`: the
 * successor (`alternate`: the provider metadata Kubernetes' structured authentication verifies
 * idgate's tokens with) and what says more of the deprecation (`deprecation`, RFC 9745 §3: this
 * server's OpenAPI document, whose operation is marked deprecated and says why).
 * @example tokenReviewLink('https://id.example.com/oauth') // '<https://id.example.com/oauth/.well-known/openid-configuration>; rel="alternate", …'
 */
export function tokenReviewLink(issuer: string): string {
  const root = issuer.slice(0, -'/oauth'.length);
  return [
    `<${issuer}/.well-known/openid-configuration>; rel="alternate"; type="application/json"`,
    `<${root}/openapi.json>; rel="deprecation"; type="application/json"`,
  ].join(', ');
}

const DEPRECATION_HEADERS = {
  Deprecation: `since when the endpoint is deprecated (RFC 9745): ${TOKEN_REVIEW_DEPRECATION}`,
  Link: 'the successor, the provider metadata (rel="alternate"), and this document (rel="deprecation", RFC 9745 §3)',
};
const deprecated = (response: Omit<ResponseDoc, 'headers'>): ResponseDoc => ({
  ...response,
  headers: DEPRECATION_HEADERS,
});

/**
 * The `detail` of the 400 for a body that is not a TokenReview: its first issue, naming the field
 * (the token itself is never quoted).
 * @example
 * const body = { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview' };
 * describeReviewIssue(TokenReviewRequest.safeParse(body).error, body); // 'spec is required'
 */
export function describeReviewIssue(error: z.core.$ZodError, body: unknown): string {
  return describeFirstIssue(error, {
    label: (path) => path || 'body',
    input: body,
    secrets: ['token'],
    positions: true,
  });
}

// TokenReviewRequest has no transforms: its output side, which fastify validates with, accepts what
// its input side accepts.
const TOKEN_REVIEW_DOC: RouteDoc = {
  operationId: 'reviewToken',
  summary: 'Kubernetes TokenReview (webhook token authenticator)',
  description:
    "Deprecated: kept for the Kubernetes webhook contract; Kubernetes' structured authentication (the API server verifying idgate's tokens itself against the provider metadata) replaces it. Every answer carries `Deprecation` (RFC 9745) and `Link` (RFC 8288) headers. A token that does not authenticate is answered 200 with `status.authenticated: false` (Kubernetes treats any other status as an outage).",
  tags: ['kubernetes'],
  deprecated: true,
  security: ['tokenReviewApiKey'],
  scope: 'tokenreview',
  body: { json: TokenReviewRequest },
  responses: {
    200: deprecated({ description: 'the review', json: TokenReviewResponse }),
    400: deprecated({
      description: 'the body is not a TokenReview: the detail names the field',
      problem: ['invalid_token_review'],
    }),
    401: deprecated({ description: 'no API key, or not a valid one' }),
    403: deprecated({ description: 'the API key lacks the tokenreview scope' }),
    413: deprecated({ description: 'the body is over the size limit' }),
    415: deprecated({ description: 'the body is not application/json' }),
  },
};

/**
 * `POST /oauth/authenticate`: the Kubernetes webhook token authenticator. A token that does not
 * authenticate is not an HTTP error (Kubernetes treats non-2xx as an outage): it is 200 with
 * `status.authenticated: false`.
 */
export async function tokenReviewRoutes(app: FastifyInstance): Promise<void> {
  const { idgate } = app;
  const authenticate = apiKeyAuthenticator(idgate);
  const { metrics } = idgate;
  const audit = idgate.audit.tokenReviews;
  const { core } = idgate;
  const link = tokenReviewLink(idgate.config.issuer);
  app.decorateRequest('reviewerKey', null);

  app.post(
    '/oauth/authenticate',
    {
      config: { errorFormat: 'problem', doc: TOKEN_REVIEW_DOC },
      schema: routeSchema(TOKEN_REVIEW_DOC),
      // The handler answers a body the schema refuses: 415 or zod's words for what is wrong.
      attachValidation: true,
      onRequest: async (request, reply) => {
        reply
          .header('deprecation', TOKEN_REVIEW_DEPRECATION)
          .header('link', link)
          .header('cache-control', 'no-store');
        request.reviewerKey = await authenticate(request, 'tokenreview');
      },
    },
    async (request, reply) => {
      if (!request.headers['content-type']?.toLowerCase().startsWith('application/json')) {
        return sendProblem(reply, 415, 'unsupported_media_type', 'a TokenReview is sent as application/json');
      }
      let review = request.body as TokenReviewRequest;
      if (request.validationError !== undefined) {
        // zod, whose schema the body schema is made from, has the last word and says what is wrong.
        const parsed = TokenReviewRequest.safeParse(request.body);
        if (!parsed.success)
          return sendProblem(
            reply,
            400,
            'invalid_token_review',
            describeReviewIssue(parsed.error, request.body),
          );
        review = parsed.data;
      }
      // The key came from the directory's memory with its cluster binding: no storage read here.
      const answer = await core.reviewToken(review, { cluster: request.reviewerKey?.cluster ?? null });
      recordTokenReview(metrics, answer.status);
      const key = request.reviewerKey;
      const authenticated = answer.status.authenticated === true;
      // Counted in memory; the background writer stores it (`audit.tokenReview`).
      audit.record(
        {
          cluster: key?.cluster?.name ?? null,
          apiKeyId: key?.id ?? null,
          authenticated,
          reason: authenticated ? null : denialReason(answer.status.error),
        },
        // Only a review written as an event of its own names its request.
        audit.perDecision ? requestOrigin(request) : undefined,
      );
      return answer;
    },
  );
}
