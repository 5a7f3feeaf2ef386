import type { ApiKeyScope, OAuthErrorCode, ProblemCode } from '@idgate/schema';
import type { FastifySchema } from 'fastify';
import { z } from 'zod';

/**
 * How a caller proves who it is to a route, as the OpenAPI document names its security schemes:
 * - `adminApiKey`: `Authorization: Bearer idg_…`, an API key holding the route's {@link RouteDoc.scope};
 * - `tokenReviewApiKey`: the same, with the `tokenreview` scope;
 * - `clientSecretBasic` / `clientSecretPost`: an OAuth client's credentials (RFC 6749 §2.3.1);
 *   a public client sends only its `client_id`;
 * - `accessToken`: `Authorization: Bearer <access token>` (RFC 6750);
 * - `browserSession`: the sign-in cookie the login pages set.
 * An empty list means anyone may call the route.
 */
export type RouteSecurity =
  | 'adminApiKey'
  | 'tokenReviewApiKey'
  | 'clientSecretBasic'
  | 'clientSecretPost'
  | 'accessToken'
  | 'browserSession';

/**
 * A header a response carries (or a request sends): what it holds, as a sentence, or that with
 * the schema of its value (a string otherwise).
 */
export type HeaderDoc = string | { readonly description: string; readonly schema?: z.core.$ZodType };

/** One response a route may answer, by status. */
export interface ResponseDoc {
  readonly description: string;
  /** An `application/json` body of this schema (its output side). */
  readonly json?: z.core.$ZodType;
  /** An RFC 9457 problem (`application/problem+json`) with one of these codes. */
  readonly problem?: readonly ProblemCode[];
  /** An RFC 6749 error object (`application/json`) with one of these codes. */
  readonly oauthError?: readonly OAuthErrorCode[];
  /** An HTML page. */
  readonly html?: true;
  /** Plain text (`text/plain`), e.g. Prometheus metrics: what the text holds. */
  readonly text?: string;
  /** Bodies of other media types: media type (`text/css`) → what the body holds. */
  readonly content?: Readonly<Record<string, string>>;
  /** Response headers worth documenting: name → what it holds. */
  readonly headers?: Readonly<Record<string, HeaderDoc>>;
}

/**
 * What the OpenAPI document says of one route, declared beside the route as its
 * `config.doc`: the document is generated from these, and a test walks the router and fails on
 * any route without one. The schemas are the zod schemas the route itself validates with (input
 * side for parameters and bodies, output side for responses), never copies of them.
 * @example
 * app.get('/admin/v1/users/:username', route({
 *   operationId: 'getUser', summary: 'A user', tags: ['users'],
 *   params: z.object({ username: z.string() }),
 *   responses: { 200: { description: 'the user', json: User, headers: { ETag: 'its version' } } },
 * }), handler);
 */
export interface RouteDoc {
  /** Unique across the document, lowerCamelCase (`listUsers`); the SDK's method name where one exists. */
  readonly operationId: string;
  readonly summary: string;
  readonly description?: string;
  readonly tags: readonly string[];
  /**
   * The ways to call the route, any one of them (defaults: `adminApiKey` for routes in an admin
   * scope, none elsewhere). `anonymous` adds calling without credentials (a public client at the
   * token endpoint); an empty list means anyone may call the route.
   */
  readonly security?: readonly (RouteSecurity | 'anonymous')[];
  /**
   * The API key scope the route needs (`users:read`, `tokenreview`): what its API key security
   * requirement lists, and — for an admin route — what `adminScope` checks each request for.
   */
  readonly scope?: ApiKeyScope;
  readonly deprecated?: boolean;
  /** Path parameters, by the names the route declares (`:username` → `username`). */
  readonly params?: z.core.$ZodObject;
  readonly query?: z.core.$ZodObject;
  /** Request headers the route reads (`If-Match`), by name; their string values' schemas. */
  readonly headers?: z.core.$ZodObject;
  /** The request body: JSON, or an `application/x-www-form-urlencoded` form. */
  readonly body?: {
    readonly json?: z.core.$ZodType;
    readonly form?: z.core.$ZodType;
    readonly required?: boolean;
  };
  /**
   * Every status the route answers on purpose. Responses every route of its kind shares (401/403
   * of an API key, 503 of storage, 415/413 of a body) are added by the generator.
   */
  readonly responses: Readonly<Record<number, ResponseDoc>>;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route's OpenAPI description (see {@link RouteDoc}). */
    doc?: RouteDoc;
  }
}

/**
 * What fastify validates and serializes a route with, from the route's declaration: a JSON body's
 * schema, and the schema of each response that has a JSON body. The route declares each schema
 * once (its `doc`); the OpenAPI document, the validation and the serialization all come from it.
 * Zod's output side says `additionalProperties: false` where zod strips unknown keys, so fastify's
 * ajv strips them too (its `removeAdditional`).
 * @example app.post('/oauth/authenticate', { config: { doc }, schema: routeSchema(doc) }, handler)
 */
export function routeSchema(doc: RouteDoc): FastifySchema {
  const toJson = (schema: z.core.$ZodType) => z.toJSONSchema(schema, { target: 'draft-7' });
  const response = Object.fromEntries(
    Object.entries(doc.responses).flatMap(([status, answer]) =>
      answer.json === undefined ? [] : [[status, toJson(answer.json)]],
    ),
  );
  return {
    ...(doc.body?.json === undefined ? {} : { body: toJson(doc.body.json) }),
    ...(Object.keys(response).length === 0 ? {} : { response }),
  };
}
