import { type AdminObject, type AdminPorts, isAdminError, parseAdminInput } from '@idgate/core/admin';
import { AdminApiScope } from '@idgate/schema';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { apiKeyAuthenticator } from '../../http/api-key-auth.js';
import { requestOrigin } from '../../http/caller.js';
import { sendProblem } from '../../http/errors.js';
import type { RouteDoc } from '../../openapi/route-doc.js';

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * The administrative ports of an admin request: the server's, acting for the request's API
     * key, so each change it makes is audited with that key as its actor and the request's
     * origin (address, user agent, request id, trace id).
     */
    admin: AdminPorts;
  }
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: what the check looks for
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * What an admin route declares: its OpenAPI description, with the scope of the admin API it needs
 * — listed in its security requirement and checked on each request, from this one declaration.
 */
export type AdminRouteDoc = RouteDoc & { readonly scope: AdminApiScope };

/** What a schema parses to; undefined where the route declares none. */
type Parsed<Schema> = Schema extends z.core.$ZodType ? z.output<Schema> : undefined;

/**
 * A route's input as its declared schemas parse it: the path parameters, the query and the JSON
 * body. A body the route lets the caller leave out (`required: false`) is read as `{}` then.
 */
export interface DeclaredInput<Doc extends RouteDoc> {
  readonly params: Parsed<Doc['params']>;
  readonly query: Parsed<Doc['query']>;
  readonly body: Doc['body'] extends { readonly json: infer Json } ? Parsed<Json> : undefined;
}

/** What an admin route's declared input is checked as, beside the schemas of its {@link RouteDoc}. */
export interface AdminInput<Doc extends RouteDoc = RouteDoc> {
  /** The object a refusal names (`invalid_<object>`); by default the scope's. */
  readonly object?: AdminObject;
  /** What a JSON body is, in the 415 answer to a body of another media type (`'a change of a user'`). */
  readonly json?: string;
  /**
   * What is checked of the JSON body as sent before its schema looks at it: what the route's use
   * case refuses first, so that it stays first — a string with a control character
   * (`refuseControlCharacters`), a name taken in any case, a change that is not an object.
   * @throws AdminError
   */
  readonly check?: (
    body: unknown,
    request: FastifyRequest,
    params: Parsed<Doc['params']>,
  ) => void | Promise<void>;
}

/** An admin route's handler: its declared input, parsed, and the request and reply. */
export type AdminHandler<Doc extends RouteDoc> = (
  input: DeclaredInput<Doc>,
  request: FastifyRequest,
  reply: FastifyReply,
) => unknown;

/** The options of an admin route: errors as problems, its description, and its handler. */
export interface AdminRouteOptions {
  readonly config: { errorFormat: 'problem'; doc: RouteDoc };
  handler(request: FastifyRequest, reply: FastifyReply): Promise<unknown>;
}

/** What every admin route plugin shares, from {@link adminScope}. */
export interface AdminScope {
  /**
   * An admin route, declared once: its OpenAPI description (errors as problems, security
   * `adminApiKey` unless the doc says otherwise) with the `scope` its API key must hold — 403
   * `api_key_scope` naming it otherwise, before anything else of the request is read — and its
   * handler, which runs once the declared input is checked, in this order — path parameters,
   * query, then the body: 415 unless it is JSON (`input.json` names it), `input.check`, then its
   * schema.
   * A refusal is the problem `invalid_<object>` (400) whose detail names the first bad field as
   * `parseAdminInput` words it (`limit "0": must be …`, `body: unknown field bogus`). Use cases
   * that take an input as sent (`createClient`, `listUserSessions`, …) check it again themselves
   * — the CLI calls them too, and some check more than the schema — so a handler hands them the
   * request's own value.
   * @example app.get(`${BASE}/:username`, route({ operationId: 'getUser', scope: 'users:read', params: UserParams, ... }, ({ params }, request) => getUser(request.admin, params.username)))
   */
  route<const Doc extends AdminRouteDoc>(doc: Doc, handler: AdminHandler<Doc>): AdminRouteOptions;
  route<const Doc extends AdminRouteDoc>(
    doc: Doc,
    input: AdminInput<Doc>,
    handler: AdminHandler<Doc>,
  ): AdminRouteOptions;
  /** The server's root URL (the issuer without `/oauth`), for `Location` headers. */
  readonly root: string;
}

/**
 * Sets up an admin route plugin (an encapsulated fastify scope under `/admin/v1`): every request
 * needs an API key holding the scope its route declares (a route declared without one is refused
 * when it is registered), nothing answered is cached, each route's declared input is checked
 * before its handler runs (refusals name `object` unless the route says otherwise), and a missing
 * object is worded for the API (the use case's message is the CLI's), repeating only the start of
 * what was asked for. Every other refusal goes to the server's handler, as a problem.
 * @example const { route, root } = adminScope(app, 'user');
 */
export function adminScope(app: FastifyInstance, object: AdminObject): AdminScope {
  const authenticate = apiKeyAuthenticator(app.idgate);
  if (!app.hasRequestDecorator('admin')) app.decorateRequest('admin', null as unknown as AdminPorts);
  app.addHook('onRoute', (options) => {
    const scope = options.config?.doc?.scope;
    if (!AdminApiScope.safeParse(scope).success)
      throw new Error(`admin route ${options.method} ${options.url} declares no scope of the admin API`);
  });
  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    reply.header('cache-control', 'no-store');
    const scope = request.routeOptions.config.doc?.scope as AdminApiScope;
    // The key's ports (kept per key), with where this request came from for its events.
    const acting = app.idgate.adminActingFor(await authenticate(request, scope));
    request.admin = { ...acting, auditOrigin: requestOrigin(request) };
  });
  // No object is named with a control character; PostgreSQL cannot even compare one (NUL).
  app.addHook('preValidation', async (request: FastifyRequest, reply: FastifyReply) => {
    const params = (request.params ?? {}) as Record<string, unknown>;
    for (const value of Object.values(params)) {
      if (typeof value === 'string' && CONTROL.test(value)) {
        return sendProblem(reply, 404, 'not_found', 'no object is named with a control character');
      }
    }
    return undefined;
  });
  app.setErrorHandler((error: FastifyError, _request: FastifyRequest, reply: FastifyReply) => {
    if (isAdminError(error) && error.code === 'not_found') {
      const what = `there is no ${error.object.replaceAll('_', ' ')} ${(error.key ?? '').slice(0, 64)}`;
      return sendProblem(reply, error.status, error.problemCode, what);
    }
    throw error;
  });

  function route<const Doc extends AdminRouteDoc>(
    doc: Doc,
    ...rest: [AdminHandler<Doc>] | [AdminInput<Doc>, AdminHandler<Doc>]
  ): AdminRouteOptions {
    const [input, handle] = rest.length === 1 ? [{}, rest[0]] : rest;
    if (doc.body?.json !== undefined && input.json === undefined)
      throw new Error(`admin route ${doc.operationId} takes a JSON body: say what it is (input.json)`);
    const declaredBy = declaredInput(doc, { object, ...input });
    return {
      config: { errorFormat: 'problem', doc: { security: ['adminApiKey'], ...doc } },
      handler: async (request, reply) => {
        const declared = await declaredBy(request, reply);
        return declared === undefined ? reply : handle(declared, request, reply);
      },
    };
  }

  return {
    route,
    root: app.idgate.config.issuer.slice(0, -'/oauth'.length),
  };
}

/**
 * The check of a route's declared input (see {@link AdminScope.route}): the parsed input, or
 * undefined once it has answered 415. Path segments and query values reach it as fastify parsed
 * them (strings; a repeated query key as a list).
 * @throws AdminError `invalid_input` about `input.object`, naming the first bad field.
 */
function declaredInput<Doc extends RouteDoc>(
  doc: Doc,
  input: AdminInput<Doc> & { object: AdminObject },
): (request: FastifyRequest, reply: FastifyReply) => Promise<DeclaredInput<Doc> | undefined> {
  const { object } = input;
  const parse = (schema: z.core.$ZodType | undefined, value: unknown, where: string) =>
    schema === undefined
      ? undefined
      : parseAdminInput({ safeParse: (v: unknown) => z.safeParse(schema, v) }, value, object, {
          label: (path) => path || where,
        });
  const body = doc.body;
  return async (request, reply) => {
    const params = parse(doc.params, request.params, 'params') as Parsed<Doc['params']>;
    const query = parse(doc.query, request.query, 'query');
    if (body?.json === undefined) return { params, query, body: undefined } as DeclaredInput<Doc>;
    const sent = request.body !== undefined && request.body !== null;
    if (!sent && body.required === false)
      return { params, query, body: parse(body.json, {}, 'body') } as DeclaredInput<Doc>;
    if (!request.headers['content-type']?.toLowerCase().startsWith('application/json')) {
      sendProblem(reply, 415, 'unsupported_media_type', `${input.json} is sent as application/json`);
      return undefined;
    }
    await input.check?.(request.body, request, params);
    return { params, query, body: parse(body.json, request.body, 'body') } as DeclaredInput<Doc>;
  };
}
