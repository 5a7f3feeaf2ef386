import {
  amrOf,
  type BrowserSessionRecord,
  type InteractionRequest,
  isDeviceApproval,
  isStandalone,
  passkeysPossible,
  type UserRecord,
} from '@idgate/core';
import { FormReader, type FormValues } from '@idgate/schema';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { requestOrigin } from '../../http/caller.js';
import type { FormBody } from '../../http/form.js';
import { AuthorizationFlow } from '../../pages/flow.js';
import { PAGE_ANSWERS, pageRoute, sendPage } from '../../pages/form-action.js';
import { InteractionId, interactionFields, present } from '../../pages/form-fields.js';
import type { Messages } from '../../pages/i18n.js';
import { BrowserState, type LiveInteraction } from '../../pages/state.js';
import { messagePage } from '../../pages/views/message.js';
import { recoveryCodesPage, secondFactorPage, totpEnrolmentPage } from '../../pages/views/second-factor.js';

const Interaction = InteractionId.describe('the sign-in request (interaction) the form belongs to');
const Query = z.object({ interaction: Interaction.optional() });
const CodeForm = z.object({
  interaction: Interaction,
  csrf: z.string().describe("the form's CSRF token"),
  code: z
    .string()
    .trim()
    .min(1)
    .max(64)
    .describe('a 6-digit TOTP code, or a recovery code (dashes and case ignored)'),
  factor: z
    .string()
    .max(64)
    .optional()
    .describe('the factor being enrolled, when the code confirms an enrolment at sign-in'),
});
const ContinueForm = z.object({ interaction: Interaction, csrf: z.string() });
const PasskeyForm = z.object({
  interaction: Interaction,
  csrf: z.string().describe("the form's CSRF token"),
  credential: z
    .string()
    .max(64 * 1024)
    .describe("the browser's answer to navigator.credentials.get(), as JSON (AuthenticationResponseJSON)"),
});

const EXPIRED = (t: Messages) => t.errors.signInExpired;

/** Where a finished sign-in may send the browser: the client's redirect URI, if any. */
const redirectOf = (stored: InteractionRequest): string | undefined =>
  isStandalone(stored) || isDeviceApproval(stored) ? undefined : stored.redirectUri;

/** Where a sign-in goes for its second factor. */
export function secondFactorUrl(issuer: string, interactionId: string): string {
  return `${new URL(issuer).pathname}/second-factor?interaction=${encodeURIComponent(interactionId)}`;
}

/**
 * The step after the password (`GET/POST /oauth/second-factor`): a TOTP code or a recovery code
 * for a user who has a second factor; for one who must have one and has none (an administrator
 * requires it, or the application asked `acr_values=urn:idgate:acr:mfa`), enrolling a TOTP
 * authenticator there and then. Only then does the browser get a session, whose `amr` says
 * `pwd otp mfa`.
 */
export async function secondFactorRoutes(app: FastifyInstance): Promise<void> {
  const { idgate } = app;
  const state = new BrowserState(idgate);
  const flow = new AuthorizationFlow(idgate, state);
  const path = `${new URL(idgate.config.issuer).pathname}/second-factor`;
  const continuePath = `${path}/continue`;
  const passkeyPath = `${path}/passkey`;

  /** The interaction and the user owing it a second factor, when the browser holds both. */
  const pending = async (request: FastifyRequest, sent: string | undefined) => {
    const interaction = await state.loadInteraction(request, sent);
    if (interaction?.pendingUserId == null) return undefined;
    const user = await idgate.storage.users.findById(interaction.pendingUserId);
    if (user === undefined || user.disabled) return undefined;
    return { interaction, user };
  };

  const show = async (
    reply: FastifyReply,
    status: number,
    interaction: LiveInteraction,
    user: UserRecord,
    error?: string,
  ): Promise<FastifyReply> => {
    const look = flow.look(reply.request);
    const form = { interactionId: interaction.id, csrfToken: interaction.csrfToken };
    // The form's answer may redirect to the application (CSP form-action), as the login form's.
    const options = { formRedirects: [redirectOf(interaction.request)] };
    const need = await idgate.core.factors.need(user.id);
    if (need.enrolled) {
      const factors = await idgate.core.factors.list(user.id);
      const passkey =
        passkeysPossible(idgate.config.issuer) && factors.some((f) => f.kind === 'webauthn')
          ? {
              action: passkeyPath,
              options: await idgate.core.factors.startPasskeyAssertion(user, interaction.id),
            }
          : undefined;
      return sendPage(reply, status, secondFactorPage({ look, action: path, form, passkey, error }), options);
    }
    // None yet: enrol one now (a new key each time the page is shown, the unconfirmed one replaced).
    const enrolment = await idgate.core.factors.startTotp(user, look.t.factors.defaultName);
    return sendPage(
      reply,
      status,
      totpEnrolmentPage({ look, action: path, form, ...enrolment, required: true, error }),
      options,
    );
  };

  app.get<{ Querystring: FormValues }>(
    '/oauth/second-factor',
    pageRoute({
      operationId: 'getSecondFactorPage',
      summary: 'The second-factor step of a sign-in',
      description:
        'After a right password, for a user with a second factor (or who must have one): the code form, or enrolling an authenticator app.',
      query: Query,
      responses: {
        200: PAGE_ANSWERS.page('the code form, or the enrolment page'),
        400: PAGE_ANSWERS.error('the sign-in request expired or was started in another browser'),
      },
    }),
    async (request, reply) => {
      const query = new FormReader(Query, request.query);
      const found = await pending(request, present(query.field('interaction')));
      if (found === undefined) return flow.errorPage(reply, 400, EXPIRED);
      return show(reply, 200, found.interaction, found.user);
    },
  );

  app.post<{ Body: FormBody | undefined }>(
    '/oauth/second-factor',
    pageRoute({
      operationId: 'verifySecondFactor',
      summary: 'Give the second factor of a sign-in',
      body: { form: CodeForm },
      responses: {
        200: PAGE_ANSWERS.page('the recovery codes of a new enrolment, or a standalone sign-in done'),
        303: PAGE_ANSWERS.redirect('back to the application, or on to the next step of the flow'),
        400: PAGE_ANSWERS.error('the sign-in request expired'),
        401: PAGE_ANSWERS.error('the code is wrong, stale or used'),
        403: PAGE_ANSWERS.error('the CSRF token does not match'),
        429: {
          ...PAGE_ANSWERS.error('too many wrong codes: the second factor is locked for now'),
          headers: { 'Retry-After': 'seconds until a code is checked again' },
        },
      },
    }),
    async (request, reply) => {
      const form = new FormReader(CodeForm, request.body ?? {});
      const posted = await flow.posted(reply, interactionFields(form), (id) => pending(request, id));
      if ('answer' in posted) return posted.answer;
      const { interaction, user } = posted.found;
      const { t } = flow.look(request);
      const code = present(form.field('code'));
      if (code === undefined) return show(reply, 400, interaction, user, t.factors.wrongCode);
      const factorId = present(form.field('factor'));
      const caller = { ...requestOrigin(request), address: request.ip };
      const need = await idgate.core.factors.need(user.id);
      if (!need.enrolled && factorId !== undefined) {
        const done = await idgate.core.factors.confirmTotp(user, factorId, code, caller);
        if (!done.ok) return show(reply, 401, interaction, user, t.factors.wrongCode);
        const session = await finish(
          request,
          reply,
          interaction,
          user,
          amrOf([await firstFactor(interaction), 'otp']),
        );
        if (done.recoveryCodes !== null) {
          const look = flow.look(request);
          const standalone = isStandalone(interaction.request);
          if (standalone) await state.finishInteraction(reply, interaction.id);
          const next = standalone
            ? { href: `${new URL(idgate.config.issuer).pathname}/account` }
            : {
                action: continuePath,
                form: { interactionId: interaction.id, csrfToken: interaction.csrfToken },
              };
          return sendPage(reply, 200, recoveryCodesPage({ look, codes: done.recoveryCodes, next }), {
            formRedirects: [redirectOf(interaction.request)],
          });
        }
        return carryOn(reply, interaction, user, session);
      }
      const check = await idgate.core.factors.verify(user, code, [await firstFactor(interaction)], caller);
      if (!check.ok) {
        if (check.failure === 'locked') {
          reply.header('retry-after', String(check.retryAfterSeconds));
          return show(
            reply,
            429,
            interaction,
            user,
            t.errors.locked(Math.ceil(check.retryAfterSeconds / 60)),
          );
        }
        return show(reply, 401, interaction, user, t.factors.wrongCode);
      }
      const session = await finish(request, reply, interaction, user, check.amr);
      return carryOn(reply, interaction, user, session);
    },
  );

  app.post<{ Body: FormBody | undefined }>(
    '/oauth/second-factor/passkey',
    pageRoute({
      operationId: 'verifySecondFactorPasskey',
      summary: 'Give a passkey as the second factor of a sign-in',
      description:
        "The browser's answer to the second-factor page's WebAuthn options: one of the user's passkeys (user verification preferred, not required), for the page's single-use challenge; the sign-in's `amr` is then `pwd hwk mfa`.",
      body: { form: PasskeyForm },
      responses: {
        200: PAGE_ANSWERS.page('a standalone sign-in done'),
        303: PAGE_ANSWERS.redirect('back to the application, or on to the next step of the flow'),
        400: PAGE_ANSWERS.error('the sign-in request expired'),
        401: PAGE_ANSWERS.error('the passkey was refused: the message says why'),
        403: PAGE_ANSWERS.error('the CSRF token does not match'),
      },
    }),
    async (request, reply) => {
      const form = new FormReader(PasskeyForm, request.body ?? {});
      const posted = await flow.posted(reply, interactionFields(form), (id) => pending(request, id));
      if ('answer' in posted) return posted.answer;
      const { interaction, user } = posted.found;
      const { t } = flow.look(request);
      const answer = present(form.field('credential'));
      if (answer === undefined) return show(reply, 400, interaction, user, t.passkeys.refused.invalid);
      const caller = { ...requestOrigin(request), address: request.ip };
      const check = await idgate.core.factors.verifyPasskey(
        user,
        interaction.id,
        answer,
        [await firstFactor(interaction)],
        caller,
      );
      if (!check.ok) return show(reply, 401, interaction, user, t.passkeys.refused[check.failure]);
      const session = await finish(request, reply, interaction, user, check.amr);
      return carryOn(reply, interaction, user, session);
    },
  );

  app.post<{ Body: FormBody | undefined }>(
    '/oauth/second-factor/continue',
    pageRoute({
      operationId: 'continueAfterEnrolment',
      summary: 'Go on with the sign-in after the recovery codes were shown',
      body: { form: ContinueForm },
      responses: {
        200: PAGE_ANSWERS.page('a standalone sign-in done'),
        303: PAGE_ANSWERS.redirect('back to the application, or on to the next step of the flow'),
        400: PAGE_ANSWERS.error('the sign-in request expired'),
        403: PAGE_ANSWERS.error('the CSRF token does not match'),
      },
    }),
    async (request, reply) => {
      const form = new FormReader(ContinueForm, request.body ?? {});
      const posted = await flow.posted(reply, interactionFields(form), async (id) => {
        const interaction = await state.loadInteraction(request, id);
        return interaction?.userId == null ? undefined : { interaction, userId: interaction.userId };
      });
      if ('answer' in posted) return posted.answer;
      const { interaction, userId } = posted.found;
      const current = await state.currentSession(request);
      if (current === undefined || current.user.id !== userId) return flow.errorPage(reply, 400, EXPIRED);
      return carryOn(reply, interaction, current.user, current.session);
    },
  );

  /**
   * What the user proved before this page: a password (here, or at an LDAP directory), or a
   * sign-in at a redirecting upstream provider (`fed`).
   */
  async function firstFactor(interaction: LiveInteraction): Promise<'pwd' | 'fed'> {
    const upstream = interaction.pendingUpstream;
    if (upstream == null) return 'pwd';
    const provider = await idgate.providers.get(upstream.provider);
    return provider?.connector.kind === 'redirect' ? 'fed' : 'pwd';
  }

  /** Signs the browser in with `amr` and records the sign-in in the interaction. */
  async function finish(
    request: FastifyRequest,
    reply: FastifyReply,
    interaction: LiveInteraction,
    user: UserRecord,
    amr: string[],
  ): Promise<BrowserSessionRecord> {
    // The directory identity the password was checked at (LDAP), for its grants to re-check.
    const session = await state.startSession(request, reply, user, interaction.pendingUpstream ?? null, amr);
    await idgate.storage.interactions.setUser(interaction.id, user.id, session.authTime, amr);
    return session;
  }

  /** Where a finished sign-in goes: the application, the device confirmation, or "signed in". */
  async function carryOn(
    reply: FastifyReply,
    interaction: LiveInteraction,
    user: UserRecord,
    session: BrowserSessionRecord,
  ): Promise<FastifyReply> {
    const stored = interaction.request;
    if (isStandalone(stored)) {
      await state.finishInteraction(reply, interaction.id);
      const look = flow.look(reply.request);
      const message = look.t.signedInMessage(user.username);
      return sendPage(reply, 200, messagePage({ look, title: look.t.signedIn, message }));
    }
    if (isDeviceApproval(stored)) return flow.confirmDevice(reply, interaction.id);
    const client = await idgate.storage.clients.findById(stored.clientId);
    if (client === undefined) return flow.errorPage(reply, 400, EXPIRED);
    return flow.proceed(reply, stored, client, state.authentication(session, user, true), {
      interactionId: interaction.id,
    });
  }
}
