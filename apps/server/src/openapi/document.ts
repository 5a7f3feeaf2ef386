import { isDeepStrictEqual } from 'node:util';
import type { OAuthErrorCode, ProblemCode } from '@idgate/schema';
import {
  AdminApiScope,
  API_KEY_ROLES,
  ApiKeyRole,
  Cluster,
  CreatedCluster,
  DeviceAuthorizationResponse,
  IdentityProvider,
  IntrospectionResponse,
  Jwks,
  LinkedIdentity,
  OAuthError,
  Problem,
  ProviderMetadata,
  TokenResponse,
  TokenReviewRequest,
  TokenReviewResponse,
  UserInfo,
} from '@idgate/schema';
import type { RouteOptions } from 'fastify';
import { z } from 'zod';
import type { RouteErrorFormat } from '../http/errors.js';
import type { HeaderDoc, ResponseDoc, RouteDoc, RouteSecurity } from './route-doc.js';

/** A JSON Schema (draft 2020-12, OpenAPI 3.1's dialect) or an OpenAPI object, as plain JSON. */
type Json = Record<string, unknown>;

/** One route the server answers, as {@link RouteCatalog} recorded it. */
export interface CatalogedRoute {
  readonly method: string;
  /** The path in OpenAPI's form (`/admin/v1/clusters/{name}`). */
  readonly path: string;
  readonly doc: RouteDoc | undefined;
  readonly errorFormat: RouteErrorFormat | undefined;
}

/**
 * The path of a fastify route in OpenAPI's form: `:name` becomes `{name}`.
 * @example openapiPath('/admin/v1/clusters/:name') // '/admin/v1/clusters/{name}'
 */
export function openapiPath(url: string): string {
  return url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

/**
 * Every route of the application, with its `config.doc`, recorded by an `onRoute` hook registered
 * before the routes (a hook reaches only the routes registered after it). HEAD routes fastify adds
 * beside each GET are left out: they answer as the GET does, without a body.
 * @example
 * const catalog = new RouteCatalog();
 * app.addHook('onRoute', catalog.record);
 */
export class RouteCatalog {
  readonly #routes: CatalogedRoute[] = [];

  /** The `onRoute` hook. */
  readonly record = (route: RouteOptions): void => {
    for (const method of [route.method].flat()) {
      if (method === 'HEAD') continue;
      this.#routes.push({
        method,
        path: openapiPath(route.url),
        doc: route.config?.doc,
        errorFormat: route.config?.errorFormat,
      });
    }
  };

  /** The routes recorded so far, in the order they were registered. */
  get routes(): readonly CatalogedRoute[] {
    return this.#routes;
  }
}

/** What the document says of the server as a whole. */
export interface OpenApiOptions {
  /** The server's root URL (the issuer without `/oauth`): the document's server. */
  readonly root: string;
  /** The OAuth issuer, for the URLs the descriptions name. */
  readonly issuer: string;
  /** The server's version (its package's). */
  readonly version: string;
}

// The names wire objects take under `components/schemas` when they have none of their own (a
// schema with an `id` in zod's global registry keeps that one).
const NAMED: ReadonlyArray<readonly [z.core.$ZodType, string]> = [
  [Problem, 'Problem'],
  [OAuthError, 'OAuthError'],
  [TokenResponse, 'TokenResponse'],
  [ProviderMetadata, 'ProviderMetadata'],
  [Jwks, 'Jwks'],
  [TokenReviewRequest, 'TokenReviewRequest'],
  [TokenReviewResponse, 'TokenReviewResponse'],
  [DeviceAuthorizationResponse, 'DeviceAuthorizationResponse'],
  [UserInfo, 'UserInfo'],
  [IntrospectionResponse, 'IntrospectionResponse'],
  [Cluster, 'Cluster'],
  [CreatedCluster, 'CreatedCluster'],
  [IdentityProvider, 'IdentityProvider'],
  [LinkedIdentity, 'LinkedIdentity'],
];

const TAGS: ReadonlyArray<readonly [string, string]> = [
  ['oidc', 'OpenID Connect discovery and keys: what a relying party reads to verify tokens.'],
  [
    'oauth',
    'OAuth 2.0 endpoints a client program calls: tokens, device codes, userinfo, revocation, introspection.',
  ],
  [
    'pages',
    'The pages a person goes through in a browser: authorization, sign-in, consent, devices, sign-out.',
  ],
  ['kubernetes', 'The Kubernetes webhook token authenticator.'],
  ['operations', 'Health, readiness, metrics and this document.'],
  ['users', 'Admin API: local user accounts.'],
  ['groups', 'Admin API: groups of users.'],
  ['identities', 'Admin API: external identities linked to users.'],
  ['sessions', 'Admin API: browser sessions.'],
  ['grants', 'Admin API: grants (what a user allowed an application, and the refresh tokens of it).'],
  ['clients', 'Admin API: OAuth clients.'],
  ['api-keys', 'Admin API: API keys (TokenReview and the admin API).'],
  ['signing-keys', 'Admin API: the keys tokens are signed with.'],
  ['identity-providers', 'Admin API: external identity providers (OIDC, GitHub, GitLab, LDAP).'],
  ['clusters', 'Admin API: Kubernetes clusters, their audiences and TokenReview keys.'],
  [
    'trusts',
    'Admin API: trusts of external issuers (CI systems, service accounts) whose tokens the token exchange accepts, and their evaluation.',
  ],
  ['login-attempts', 'Admin API: recorded sign-in attempts.'],
  ['audit', 'Admin API: the audit trail of security events, listed and tailed live.'],
  ['declarations', 'Admin API: objects declared in files (`idgate apply`), planned and applied.'],
  [
    'incident-response',
    'Admin API: when something is compromised — revoke everything issued before an instant, and the source addresses sign-ins are refused from.',
  ],
];

const API_KEY_UNAUTHORIZED: ResponseDoc = {
  description: 'no API key, or not a valid one',
  problem: ['api_key_missing', 'api_key_invalid'],
  headers: { 'WWW-Authenticate': 'the Bearer challenge (RFC 6750 §3)' },
};
const apiKeyForbidden = (scope: string | undefined): ResponseDoc => ({
  description:
    scope === undefined
      ? 'the API key lacks the scope this operation needs'
      : `the API key lacks the scope \`${scope}\` this operation needs: the problem's \`scope\` and the \`WWW-Authenticate\` challenge (\`error="insufficient_scope"\`) name it`,
  problem: ['api_key_scope'],
  headers: { 'WWW-Authenticate': 'the Bearer challenge naming the scope (RFC 6750 §3)' },
});

/** The security schemes of an API key: their requirements list the scope an operation needs. */
const API_KEY_SCHEMES: ReadonlySet<string> = new Set(['adminApiKey', 'tokenReviewApiKey']);
const STORAGE_UNAVAILABLE: ResponseDoc = {
  description: 'the database cannot answer now (down, restarting, out of connections, too slow)',
  problem: ['storage_unavailable'],
  headers: { 'Retry-After': { description: 'seconds to wait before trying again', schema: z.int() } },
};

const STRING = { type: 'string' } as const;

/** Zod's conversions, with the named wire objects moved to `components/schemas`. */
class SchemaCatalog {
  readonly components: Record<string, Json> = {};
  readonly #names = z.registry<{ id: string }>();
  readonly #metadata: z.core.$ZodRegistry<z.core.GlobalMeta>;

  constructor() {
    for (const [schema, id] of NAMED) this.#names.add(schema, { id });
    const names = this.#names;
    // The global registry's metadata (descriptions, ids a schema gave itself), with the names
    // above where a wire object has no id of its own.
    this.#metadata = {
      get: (schema: z.core.$ZodType) => {
        const own = z.globalRegistry.get(schema);
        const named = names.get(schema);
        return named === undefined || own?.id !== undefined ? own : { ...own, ...named };
      },
    } as unknown as z.core.$ZodRegistry<z.core.GlobalMeta>;
  }

  #convert(schema: z.core.$ZodType, io: 'input' | 'output'): Json {
    const json = z.toJSONSchema(schema, {
      target: 'draft-2020-12',
      io,
      // Transforms, dates, custom checks: what JSON Schema cannot say is left open, not refused.
      unrepresentable: 'any',
      metadata: this.#metadata,
    }) as Json;
    delete json.$schema;
    return json;
  }

  /**
   * The JSON Schema of `schema`, its request (`input`) or response (`output`) side. Named parts
   * become references to `components/schemas`: the output side under the name, the input side
   * under the same name where it is the same, or `<name>Input`.
   */
  schema(schema: z.core.$ZodType, io: 'input' | 'output'): Json {
    const json = this.#convert(schema, io);
    const defs = (json.$defs ?? {}) as Record<string, Json>;
    delete json.$defs;
    const names = new Map(Object.keys(defs).map((id) => [id, id]));
    if (io === 'input' && names.size > 0) {
      // A part keeps its name where its input side is its output side, and so are its parts'.
      const outputs = (this.#convert(schema, 'output').$defs ?? {}) as Record<string, Json>;
      const same = new Set(Object.keys(defs).filter((id) => isDeepStrictEqual(defs[id], outputs[id])));
      let changed = true;
      while (changed) {
        changed = false;
        for (const id of same) {
          if (refsOf(defs[id]).some((ref) => !same.has(ref))) {
            same.delete(id);
            changed = true;
          }
        }
      }
      for (const id of names.keys()) if (!same.has(id)) names.set(id, `${id}Input`);
    }
    const rename = (value: unknown) => renameRefs(value, names);
    for (const [id, body] of Object.entries(defs)) {
      const name = names.get(id) as string;
      const renamed = rename(body) as Json;
      const existing = this.components[name];
      if (existing !== undefined && !isDeepStrictEqual(existing, renamed))
        throw new Error(`two different schemas are named ${name}`);
      this.components[name] = renamed;
    }
    return rename(json) as Json;
  }

  /** The body a JSON Schema stands for, following a reference to `components/schemas`. */
  resolve(json: Json): Json {
    const ref = json.$ref;
    if (typeof ref !== 'string') return json;
    return this.components[ref.slice('#/components/schemas/'.length)] ?? json;
  }
}

/** The `$defs` ids a JSON Schema refers to. */
function refsOf(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(refsOf);
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, inner]) =>
    key === '$ref' && typeof inner === 'string' && inner.startsWith('#/$defs/')
      ? [decodeURIComponent(inner.slice('#/$defs/'.length)).replace(/~1/g, '/').replace(/~0/g, '~')]
      : refsOf(inner),
  );
}

function renameRefs(value: unknown, names: ReadonlyMap<string, string>): unknown {
  if (Array.isArray(value)) return value.map((inner) => renameRefs(inner, names));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, inner]) => {
      if (key === '$ref' && typeof inner === 'string' && inner.startsWith('#/$defs/')) {
        const [id] = refsOf({ $ref: inner }) as [string];
        return [key, `#/components/schemas/${encodeURIComponent(names.get(id) ?? id)}`];
      }
      return [key, renameRefs(inner, names)];
    }),
  );
}

const SECURITY_SCHEMES = (issuer: string): Json => ({
  adminApiKey: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'idg_…',
    description: `An idgate API key (\`idgate api-keys add\`), as \`Authorization: Bearer idg_…\` (a bare key is accepted too), holding the scope each operation's security requirement lists: ${AdminApiScope.options.map((scope) => `\`${scope}\``).join(', ')}; the \`admin\` scope holds every one of them. Roles give a key a set of them: ${ApiKeyRole.options.map((role) => `\`${role}\` (${API_KEY_ROLES[role].map((scope) => `\`${scope}\``).join(', ')})`).join(', ')}. A key without the scope is answered 403 \`api_key_scope\`, naming it.`,
  },
  tokenReviewApiKey: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'idg_…',
    description:
      'An idgate API key with the `tokenreview` scope, as the kube-apiserver sends it from its webhook kubeconfig (`users[].user.token`).',
  },
  clientSecretBasic: {
    type: 'http',
    scheme: 'basic',
    description:
      'client_secret_basic (RFC 6749 §2.3.1): the client id and secret, each form-urlencoded, as HTTP Basic credentials.',
  },
  clientSecretPost: {
    // OpenAPI has no scheme for credentials in the request body: this one points at the provider
    // metadata, whose `token_endpoint_auth_methods_supported` lists `client_secret_post`.
    type: 'openIdConnect',
    openIdConnectUrl: `${issuer}/.well-known/openid-configuration`,
    description:
      'client_secret_post (RFC 6749 §2.3.1): the client sends `client_id` and `client_secret` as fields of the form-encoded request body (documented in the body schema). OpenAPI has no security scheme for credentials in a body; this one names the authentication method of the provider metadata (`token_endpoint_auth_methods_supported`). A public client sends its `client_id` alone.',
    'x-token-endpoint-auth-method': 'client_secret_post',
  },
  accessToken: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description:
      'An access token idgate issued, as `Authorization: Bearer …` (RFC 6750 §2.1) or, on POST, the `access_token` form field (§2.2).',
  },
  browserSession: {
    type: 'apiKey',
    in: 'cookie',
    name: 'idgate_session',
    description: 'The sign-in session the login pages set in the browser (HttpOnly, SameSite=Lax).',
  },
});

/**
 * How a route answers its errors: JSON of one form (none for pages), and a page to a browser. A
 * route without a format of its own answers as an unrouted path does: a problem, or a page to a
 * browser.
 */
function formatsOf(format: RouteErrorFormat | undefined): { json?: 'oauth' | 'problem'; html: boolean } {
  if (format === undefined) return { json: 'problem', html: true };
  if (format === 'html') return { html: true };
  if (typeof format === 'string') return { json: format, html: false };
  return { json: format[0], html: true };
}

/** An error answer in the route's formats. */
function refusal(
  format: RouteErrorFormat | undefined,
  description: string,
  problem: readonly ProblemCode[],
  oauthError: OAuthErrorCode,
): ResponseDoc {
  const { json, html } = formatsOf(format);
  return {
    description,
    ...(json === 'problem' ? { problem } : {}),
    ...(json === 'oauth' ? { oauthError: [oauthError] } : {}),
    ...(html ? { html: true as const } : {}),
  };
}

/** The responses every route of its kind shares, by status. */
function commonResponses(route: CatalogedRoute, doc: RouteDoc): Record<number, ResponseDoc> {
  const format = route.errorFormat;
  const body = doc.body !== undefined;
  const common: Record<number, ResponseDoc> = {
    // Any route: a path whose percent-encoding does not decode never reaches the handler.
    400: body
      ? refusal(
          format,
          'the URL or the body is not valid',
          ['invalid_url', 'invalid_body'],
          'invalid_request',
        )
      : refusal(
          format,
          'the URL is not valid (its percent-encoding does not decode)',
          ['invalid_url'],
          'invalid_request',
        ),
  };
  // A path parameter over the router's length limit.
  if (route.path.includes('{'))
    common[414] = refusal(format, 'a path parameter is too long', ['invalid_url'], 'invalid_request');
  const security = doc.security ?? [];
  const anonymous = security.length === 0 || security.includes('anonymous');
  if (!anonymous && (security.includes('adminApiKey') || security.includes('tokenReviewApiKey'))) {
    common[401] = API_KEY_UNAUTHORIZED;
    common[403] = apiKeyForbidden(doc.scope);
  }
  if (security.includes('adminApiKey')) common[503] = STORAGE_UNAVAILABLE;
  if (body) {
    common[413] = refusal(format, 'the body is over the size limit', ['body_too_large'], 'invalid_request');
    // An OAuth endpoint answers a wrong content type 400 invalid_request (RFC 6749 §5.2).
    if (formatsOf(format).json === 'problem')
      common[415] = refusal(
        format,
        'the body is not of a media type the operation takes',
        ['unsupported_media_type'],
        'invalid_request',
      );
  }
  return common;
}

const union = <T>(a: readonly T[] | undefined, b: readonly T[] | undefined): readonly T[] | undefined =>
  a === undefined && b === undefined ? undefined : [...new Set([...(a ?? []), ...(b ?? [])])];

/** The route's own response, with what its kind adds (codes, headers); the route's words win. */
function merged(own: ResponseDoc | undefined, common: ResponseDoc | undefined): ResponseDoc {
  if (own === undefined) return common as ResponseDoc;
  if (common === undefined) return own;
  const problem = union(own.problem, common.problem);
  const oauthError = union(own.oauthError, common.oauthError);
  const headers =
    own.headers === undefined && common.headers === undefined
      ? undefined
      : { ...common.headers, ...own.headers };
  return {
    ...common,
    ...own,
    ...(problem === undefined ? {} : { problem }),
    ...(oauthError === undefined ? {} : { oauthError }),
    ...(headers === undefined ? {} : { headers }),
  };
}

/**
 * The OpenAPI 3.1 document of the routes a {@link RouteCatalog} recorded, from their `config.doc`
 * (routes without one are left out: a test fails on them). Schemas are the routes' own zod
 * schemas, converted by zod (`io: 'input'` for parameters and bodies, `'output'` for responses).
 * @example
 * const document = openapiDocument(catalog.routes, { root: 'https://id.example.com', issuer: 'https://id.example.com/oauth', version: '0.1.0' });
 */
export function openapiDocument(routes: readonly CatalogedRoute[], options: OpenApiOptions): Json {
  const schemas = new SchemaCatalog();
  const paths: Record<string, Record<string, Json>> = {};
  const tags = new Set<string>();
  const operationIds = new Map<string, string>();
  const withGet = new Set(routes.filter((r) => r.method === 'GET').map((r) => r.path));

  const parameters = (
    location: 'path' | 'query' | 'header',
    object: z.core.$ZodObject | undefined,
  ): Json[] => {
    if (object === undefined) return [];
    const json = schemas.resolve(schemas.schema(object, 'input'));
    const properties = (json.properties ?? {}) as Record<string, Json>;
    const required = new Set((json.required ?? []) as string[]);
    return Object.entries(properties).map(([name, property]) => {
      const { description, ...schema } = property;
      return {
        name,
        in: location,
        required: location === 'path' || required.has(name),
        ...(typeof description === 'string' ? { description } : {}),
        schema,
      };
    });
  };

  const header = (value: HeaderDoc): Json =>
    typeof value === 'string'
      ? { description: value, schema: STRING }
      : {
          description: value.description,
          schema: value.schema === undefined ? STRING : schemas.schema(value.schema, 'output'),
        };

  const coded = (
    name: 'Problem' | 'OAuthError',
    field: 'code' | 'error',
    codes: readonly string[],
  ): Json => ({
    allOf: [
      schemas.schema(name === 'Problem' ? Problem : OAuthError, 'output'),
      { type: 'object', properties: { [field]: { enum: [...codes] } } },
    ],
  });

  const response = (answer: ResponseDoc): Json => {
    const content: Record<string, Json> = {};
    const json: Json[] = [];
    if (answer.json !== undefined) json.push(schemas.schema(answer.json, 'output'));
    if (answer.oauthError !== undefined) json.push(coded('OAuthError', 'error', answer.oauthError));
    if (json.length > 0)
      content['application/json'] = { schema: json.length === 1 ? json[0] : { anyOf: json } };
    if (answer.problem !== undefined)
      content['application/problem+json'] = { schema: coded('Problem', 'code', answer.problem) };
    if (answer.html === true) content['text/html'] = { schema: STRING };
    if (answer.text !== undefined)
      content['text/plain'] = { schema: { ...STRING, description: answer.text } };
    for (const [type, description] of Object.entries(answer.content ?? {}))
      content[type] = { schema: { ...STRING, description } };
    return {
      description: answer.description,
      ...(answer.headers === undefined
        ? {}
        : {
            headers: Object.fromEntries(
              Object.entries(answer.headers).map(([name, value]) => [name, header(value)]),
            ),
          }),
      ...(Object.keys(content).length === 0 ? {} : { content }),
    };
  };

  for (const route of routes) {
    const { doc } = route;
    if (doc === undefined) continue;
    if (route.method === 'HEAD' && withGet.has(route.path)) continue;
    const seen = operationIds.get(doc.operationId);
    if (seen !== undefined)
      throw new Error(`operationId ${doc.operationId} names both ${seen} and ${route.method} ${route.path}`);
    operationIds.set(doc.operationId, `${route.method} ${route.path}`);
    for (const tag of doc.tags) tags.add(tag);

    const declared = [
      ...parameters('path', doc.params),
      ...parameters('query', doc.query),
      ...parameters('header', doc.headers),
    ];
    // A path parameter the doc does not describe is still one: any string.
    for (const [, name] of route.path.matchAll(/\{([^}]+)\}/g)) {
      if (!declared.some((p) => p.in === 'path' && p.name === name))
        declared.unshift({ name, in: 'path', required: true, schema: STRING });
    }

    const common = commonResponses(route, doc);
    const statuses = [...new Set([...Object.keys(doc.responses), ...Object.keys(common)].map(Number))].sort(
      (a, b) => a - b,
    );
    const responses = Object.fromEntries(
      statuses.map((status) => [String(status), response(merged(doc.responses[status], common[status]))]),
    );

    const body = doc.body;
    const requestBody =
      body === undefined
        ? undefined
        : {
            required: body.required ?? true,
            content: {
              ...(body.json === undefined
                ? {}
                : { 'application/json': { schema: schemas.schema(body.json, 'input') } }),
              ...(body.form === undefined
                ? {}
                : { 'application/x-www-form-urlencoded': { schema: schemas.schema(body.form, 'input') } }),
            },
          };

    const operation: Json = {
      operationId: doc.operationId,
      summary: doc.summary,
      ...(doc.description === undefined ? {} : { description: doc.description }),
      tags: [...doc.tags],
      ...(doc.deprecated === true ? { deprecated: true } : {}),
      // OpenAPI 3.1 §4.8.30: a requirement of a scheme other than OAuth 2.0 and OpenID Connect may
      // list the roles the operation needs; an API key's is the scope it must hold.
      security: (doc.security ?? []).map((scheme: RouteSecurity | 'anonymous') =>
        scheme === 'anonymous'
          ? {}
          : { [scheme]: API_KEY_SCHEMES.has(scheme) && doc.scope !== undefined ? [doc.scope] : [] },
      ),
      ...(declared.length === 0 ? {} : { parameters: declared }),
      ...(requestBody === undefined ? {} : { requestBody }),
      responses,
    };
    paths[route.path] ??= {};
    (paths[route.path] as Record<string, Json>)[route.method.toLowerCase()] = operation;
  }

  const described = new Map(TAGS);
  const order = [...described.keys()];
  const tagList = [...tags]
    .sort((a, b) => (order.indexOf(a) + 1 || 1e6) - (order.indexOf(b) + 1 || 1e6) || a.localeCompare(b))
    .map((name) => ({ name, ...(described.has(name) ? { description: described.get(name) } : {}) }));

  return {
    openapi: '3.1.0',
    info: {
      title: 'idgate',
      version: options.version,
      description:
        'Identity and token service: an OpenID Connect provider and a Kubernetes webhook token authenticator. Generated from the routes the server answers and the zod schemas they validate with.',
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    servers: [{ url: options.root, description: 'this idgate server' }],
    tags: tagList,
    paths,
    components: {
      schemas: Object.fromEntries(Object.entries(schemas.components).sort(([a], [b]) => a.localeCompare(b))),
      securitySchemes: SECURITY_SCHEMES(options.issuer),
    },
  };
}
