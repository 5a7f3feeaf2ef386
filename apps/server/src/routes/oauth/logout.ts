import { randomBytes } from 'node:crypto';
import { constantTimeEqual, OAuthProtocolError, type LogoutRequest as ValidatedLogout } from '@idgate/core';
import { FormReader, LogoutRequestForm } from '@idgate/schema';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { requestOrigin } from '../../http/caller.js';
import { cookieOptions } from '../../http/cookies.js';
import { type FormBody, isFormRequest } from '../../http/form.js';
import { AuthorizationFlow } from '../../pages/flow.js';
import { PAGE_ANSWERS, pageRoute, sendPage } from '../../pages/form-action.js';
import { BrowserState } from '../../pages/state.js';
import { logoutConfirmPage, messagePage } from '../../pages/views/message.js';

const CSRF_COOKIE = 'idgate_logout';

// The confirmation page's form: the request's parameters, passed on, and the person's answer.
const LogoutForm = z.object({
  ...LogoutRequestForm.shape,
  confirm: z.literal('yes').optional().describe('the confirmation page says yes'),
  csrf: z.string().optional().describe("the confirmation form's CSRF token"),
});
const logoutDoc = (method: 'GET' | 'POST') =>
  pageRoute({
    operationId: method === 'GET' ? 'logout' : 'logoutByPost',
    summary: `End the browser session (OIDC RP-Initiated Logout 1.0)${method === 'POST' ? ', by form POST' : ''}`,
    description:
      'A request with a valid id_token_hint signs out at once; any other asks the person first, so a link on another site cannot sign anyone out. Per configuration, the grants made in the session are revoked.',
    ...(method === 'GET' ? { query: LogoutRequestForm } : { body: { form: LogoutForm } }),
    responses: {
      200: PAGE_ANSWERS.page('the confirmation page, or signed out'),
      303: PAGE_ANSWERS.redirect('to the post_logout_redirect_uri'),
      400: PAGE_ANSWERS.error('the sign-out request is not valid'),
    },
  });

/**
 * `GET/POST /oauth/logout` (OIDC RP-Initiated Logout 1.0): ends the browser session and, per
 * configuration, revokes the grants made in it. A request that proves it comes from the client
 * (a valid `id_token_hint`) signs out at once; any other asks the user first, so a link on
 * another site cannot sign anyone out.
 */
export async function logoutRoutes(app: FastifyInstance): Promise<void> {
  const { idgate } = app;
  const state = new BrowserState(idgate);
  const flow = new AuthorizationFlow(idgate, state);
  const path = `${new URL(idgate.config.issuer).pathname}/logout`;
  const secure = idgate.config.issuer.startsWith('https:');

  const logout = async (request: FastifyRequest, reply: FastifyReply, params: FormBody) => {
    let validated: ValidatedLogout;
    try {
      validated = await idgate.core.logout.validate(params);
    } catch (error) {
      if (error instanceof OAuthProtocolError)
        return flow.errorPage(reply, 400, `This sign-out request is not valid: ${error.description}.`);
      throw error;
    }
    const current = await state.currentSession(request);
    const existing = request.cookies[CSRF_COOKIE];
    // A confirm other than yes is no confirmation; so is one sent by GET.
    const answer = request.method === 'POST' ? new FormReader(LogoutForm, params) : undefined;
    const confirm = answer?.field('confirm');
    const csrf = answer?.field('csrf');
    const confirmed =
      confirm?.ok === true &&
      confirm.value === 'yes' &&
      constantTimeEqual((csrf?.ok === true ? csrf.value : undefined) ?? '', existing ?? '-');
    if (current !== undefined && !validated.hinted && !confirmed) {
      // Keep a live token: a forged POST must not make the page the user has open go stale.
      const csrfToken =
        existing !== undefined && /^[A-Za-z0-9_-]{32}$/.test(existing)
          ? existing
          : randomBytes(24).toString('base64url');
      reply.setCookie(CSRF_COOKIE, csrfToken, cookieOptions({ path, secure, maxAge: 600 }));
      // The request's parameters, as sent, go on in the confirmation form.
      const sent = new FormReader(LogoutRequestForm, params);
      const passed: Record<string, string> = {};
      for (const name of Object.keys(LogoutRequestForm.shape) as Array<keyof LogoutRequestForm>) {
        const field = sent.field(name);
        if (field.ok && field.value !== undefined) passed[name] = field.value;
      }
      return sendPage(
        reply,
        200,
        logoutConfirmPage({
          look: flow.look(request),
          action: path,
          csrfToken,
          username: current.user.username,
          params: passed,
        }),
        { formRedirects: [validated.redirectTo] },
      );
    }
    if (current !== undefined) {
      await idgate.core.logout.endSession(current.session.id, {
        revokeGrants: idgate.config.logout.revokeGrants,
        clientId: validated.clientId,
        userId: current.user.id,
        origin: requestOrigin(request),
      });
    }
    state.clearSession(reply);
    if (validated.redirectTo !== undefined) return reply.redirect(validated.redirectTo, 303);
    const look = flow.look(request);
    return sendPage(
      reply,
      200,
      messagePage({ look, title: look.t.signedOut, message: look.t.signedOutMessage }),
    );
  };

  app.get<{ Querystring: FormBody }>('/oauth/logout', logoutDoc('GET'), (request, reply) =>
    logout(request, reply, request.query),
  );
  app.post<{ Body: FormBody | undefined }>('/oauth/logout', logoutDoc('POST'), (request, reply) => {
    if (!isFormRequest(request)) {
      return flow.errorPage(reply, 400, (t) => t.errors.logoutNotForm);
    }
    return logout(request, reply, request.body ?? {});
  });
}
