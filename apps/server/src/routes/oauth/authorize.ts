import { AuthorizationError, validateAuthorizationRequest } from '@idgate/core';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AuthorizationFlow } from '../../browser/flow.js';
import { PAGE_ROUTE } from '../../browser/pages.js';
import { BrowserState } from '../../browser/state.js';
import { type FormBody, isFormRequest } from '../../http/form.js';
import { STYLESHEET } from '../../views/html.js';

/** `GET/POST /oauth/authorize` (OIDC Core §3.1.2, RFC 6749 §4.1, RFC 7636) and the pages' stylesheet. */
export async function authorizeRoutes(app: FastifyInstance): Promise<void> {
  const { idgate } = app;
  const state = new BrowserState(idgate);
  const flow = new AuthorizationFlow(idgate, state);

  const authorize = async (request: FastifyRequest, reply: FastifyReply, params: FormBody) => {
    let validated: Awaited<ReturnType<typeof validateAuthorizationRequest>>;
    try {
      validated = await validateAuthorizationRequest(params, {
        findClient: (id) => idgate.storage.clients.findById(id),
        allowPlainPkce: idgate.config.pkce.allowPlain,
        requirePkce: idgate.config.pkce.requireForConfidentialClients,
      });
    } catch (error) {
      if (error instanceof AuthorizationError) return flow.fail(reply, error);
      throw error;
    }
    const current = await state.currentSession(request);
    const authentication =
      current === undefined
        ? undefined
        : {
            user: current.user,
            authTime: current.session.authTime,
            sessionId: current.session.id,
            fresh: false,
          };
    return flow.proceed(reply, validated.request, validated.client, authentication);
  };

  app.get<{ Querystring: FormBody }>('/oauth/authorize', PAGE_ROUTE, (request, reply) =>
    authorize(request, reply, request.query),
  );
  app.post<{ Body: FormBody | undefined }>('/oauth/authorize', PAGE_ROUTE, async (request, reply) => {
    if (!isFormRequest(request)) {
      return flow.errorPage(reply, 400, 'The authorization request must be sent as a form.');
    }
    return authorize(request, reply, request.body ?? {});
  });

  app.get(`/oauth/assets/idgate.css`, async (_request, reply) =>
    reply.type('text/css; charset=utf-8').header('Cache-Control', 'public, max-age=86400').send(STYLESHEET),
  );
}
