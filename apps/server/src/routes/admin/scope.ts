import { type AdminPorts, isAdminError } from '@idgate/core/admin';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { apiKeyAuthenticator } from '../../http/api-key-auth.js';
import { sendProblem } from '../../http/errors.js';
import type { RouteDoc } from '../../openapi/route-doc.js';

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * The administrative ports of an admin request: the server's, acting for the request's API
     * key, so each change it makes is audited with that key as its actor.
     */
    admin: AdminPorts;
  }
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: what the check looks for
const CONTROL = /[\u0000-\u001f\u007f]/;

/** What every admin route plugin shares, from {@link adminScope}. */
export interface AdminScope {
  /** Route options: errors as RFC 9457 problems. */
  readonly options: { config: { errorFormat: 'problem' } };
  /**
   * Route options with the route's OpenAPI description (errors as problems, security
   * `adminApiKey` unless the doc says otherwise).
   * @example app.get(BASE, route({ operationId: 'listUsers', ... }), handler)
   */
  route(doc: RouteDoc): { config: { errorFormat: 'problem'; doc: RouteDoc } };
  /** The server's root URL (the issuer without `/oauth`), for `Location` headers. */
  readonly root: string;
  /**
   * Answers 415 unless the request is JSON; `what` names the object (`'a cluster'`).
   * @returns the reply sent, or undefined when the request may go on.
   */
  requireJson(request: FastifyRequest, reply: FastifyReply, what: string): FastifyReply | undefined;
}

/**
 * Sets up an admin route plugin (an encapsulated fastify scope under `/admin/v1`): every request
 * needs an API key with the `admin` scope, nothing answered is cached, and a missing object is
 * worded for the API (the use case's message is the CLI's), repeating only the start of what was
 * asked for. Every other refusal goes to the server's handler, as a problem.
 * @example const { options, root, requireJson } = adminScope(app);
 */
export function adminScope(app: FastifyInstance): AdminScope {
  const authenticate = apiKeyAuthenticator(app.idgate, 'admin');
  if (!app.hasRequestDecorator('admin')) app.decorateRequest('admin', null as unknown as AdminPorts);
  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    reply.header('Cache-Control', 'no-store');
    request.admin = app.idgate.adminActingFor(await authenticate(request));
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
  return {
    options: { config: { errorFormat: 'problem' } },
    route: (doc) => ({ config: { errorFormat: 'problem', doc: { security: ['adminApiKey'], ...doc } } }),
    root: app.idgate.config.issuer.slice(0, -'/oauth'.length),
    requireJson(request, reply, what) {
      if (request.headers['content-type']?.toLowerCase().startsWith('application/json')) return undefined;
      return sendProblem(reply, 415, 'unsupported_media_type', `${what} is sent as application/json`);
    },
  };
}
