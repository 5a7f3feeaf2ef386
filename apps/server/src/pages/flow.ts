import {
  type Authentication,
  AuthorizationError,
  type AuthorizationRequest,
  type AuthorizationStep,
  authorizationErrorUrl,
  authorizationResponseUrl,
  type ClientRecord,
  type InteractionRecord,
} from '@idgate/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { requestOrigin } from '../http/caller.js';
import { sendErrorPage } from './form-action.js';
import type { Messages } from './i18n.js';
import { type PageLook, PageLooks } from './look.js';
import type { BrowserState } from './state.js';

/**
 * Carries an authorization request to its end: it asks for sign-in or consent through an
 * interaction, or issues the code and sends the browser back to the client.
 */
export class AuthorizationFlow {
  readonly loginPath: string;
  readonly devicePath: string;
  readonly looks: PageLooks;

  constructor(
    private readonly idgate: AppContext,
    private readonly state: BrowserState,
  ) {
    this.loginPath = `${new URL(idgate.config.issuer).pathname}/login`;
    this.devicePath = `${new URL(idgate.config.issuer).pathname}/device`;
    this.looks = new PageLooks(idgate.config);
  }

  /** Sends the browser back to the client with an error, when the error may go there, else shows it. */
  fail(reply: FastifyReply, error: AuthorizationError): FastifyReply {
    const url = authorizationErrorUrl(error, this.idgate.config.issuer);
    if (url !== undefined) return reply.redirect(url, 303);
    return this.errorPage(reply, 400, error.description);
  }

  /** How the pages look to the browser that sent `request`, in its language. */
  look(request: FastifyRequest): PageLook {
    return this.looks.for(request);
  }

  /** A "Sign-in failed" page saying `message` (in the browser's language, when it is one of ours). */
  errorPage(reply: FastifyReply, status: number, message: string | ((t: Messages) => string)): FastifyReply {
    const look = this.look(reply.request);
    const text = typeof message === 'string' ? message : message(look.t);
    return sendErrorPage(reply, status, { look, title: look.t.signInFailed, message: text });
  }

  /**
   * What a sign-in page's form was posted for — `load` finds it from the form's `interaction` —
   * with the form's CSRF token checked against it; else the error page sent instead (400: the
   * sign-in expired or is not this browser's, 403: the form did not come from the page).
   */
  async posted<Found extends { interaction: InteractionRecord }>(
    reply: FastifyReply,
    form: { interaction: string | undefined; csrf: string | undefined },
    load: (interactionId: string | undefined) => Promise<Found | undefined>,
  ): Promise<{ found: Found } | { answer: FastifyReply }> {
    const found = await load(form.interaction);
    if (found === undefined) return { answer: this.errorPage(reply, 400, (t) => t.errors.signInExpired) };
    if (!(await this.state.checkCsrf(found.interaction, form.csrf)))
      return { answer: this.errorPage(reply, 403, (t) => t.errors.notFromSignInPage) };
    return { found };
  }

  /** After sign-in, a device approval continues on the verification page's confirmation. */
  confirmDevice(reply: FastifyReply, interactionId: string): FastifyReply {
    return reply.redirect(`${this.devicePath}?interaction=${encodeURIComponent(interactionId)}`, 303);
  }

  /**
   * The next step for `request`: issue the code, or continue in the interaction (creating one
   * when there is none yet).
   */
  async proceed(
    reply: FastifyReply,
    request: AuthorizationRequest,
    client: ClientRecord,
    authentication: Authentication | undefined,
    options: { interactionId?: string; consentGiven?: boolean } = {},
  ): Promise<FastifyReply> {
    const { core } = this.idgate;
    let step: AuthorizationStep;
    try {
      step = await core.authorize.next(request, client, authentication, {
        consentGiven: options.consentGiven === true,
      });
    } catch (error) {
      if (options.interactionId !== undefined)
        await this.state.finishInteraction(reply, options.interactionId);
      if (error instanceof AuthorizationError) return this.fail(reply, error);
      throw error;
    }
    if (step.kind === 'issue') {
      const code = await core.authorize.issueCode(
        request,
        authentication as Authentication,
        requestOrigin(reply.request),
      );
      if (options.interactionId !== undefined)
        await this.state.finishInteraction(reply, options.interactionId);
      return reply.redirect(
        authorizationResponseUrl(request.redirectUri, this.idgate.config.issuer, {
          code,
          state: request.state,
        }),
        303,
      );
    }
    let interactionId = options.interactionId;
    if (interactionId === undefined) {
      const interaction = await this.state.createInteraction(reply, request);
      interactionId = interaction.id;
      if (step.kind === 'consent' && authentication !== undefined) {
        await this.idgate.storage.interactions.setUser(
          interactionId,
          authentication.user.id,
          authentication.authTime,
        );
      }
    }
    return reply.redirect(`${this.loginPath}?interaction=${encodeURIComponent(interactionId)}`, 303);
  }
}
