import {
  FACTOR_NAME_LIMIT,
  isStandalone,
  passkeysPossible,
  StorageConflictError,
  type UserRecord,
} from '@idgate/core';
import { FormReader } from '@idgate/schema';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { requestOrigin } from '../../http/caller.js';
import type { FormBody } from '../../http/form.js';
import { AuthorizationFlow } from '../../pages/flow.js';
import { PAGE_ANSWERS, pageRoute, sendPage } from '../../pages/form-action.js';
import { InteractionId, present } from '../../pages/form-fields.js';
import { BrowserState } from '../../pages/state.js';
import { messagePage } from '../../pages/views/message.js';
import { accountPage, recoveryCodesPage, totpEnrolmentPage } from '../../pages/views/second-factor.js';

const Binding = {
  interaction: InteractionId.describe("the account page's form binding (an interaction of this browser)"),
  csrf: z.string().describe("the form's CSRF token"),
};
const BoundForm = z.object(Binding);
const AddForm = z.object({
  ...Binding,
  name: z.string().trim().min(1).max(FACTOR_NAME_LIMIT).describe('what the user calls the authenticator'),
});
const PasskeyForm = z.object({
  ...Binding,
  name: z.string().trim().min(1).max(FACTOR_NAME_LIMIT).describe('what the user calls the passkey'),
  credential: z
    .string()
    .max(64 * 1024)
    .describe("the browser's answer to navigator.credentials.create(), as JSON (RegistrationResponseJSON)"),
});
const FactorForm = z.object({ ...Binding, factor: z.string().max(64).describe('the factor id') });
const ConfirmForm = z.object({
  ...Binding,
  factor: z.string().max(64).describe('the factor being enrolled'),
  code: z.string().trim().min(1).max(64).describe('the 6-digit code the authenticator app shows'),
});

const formAnswers = {
  200: PAGE_ANSWERS.page('the next page of the account'),
  400: PAGE_ANSWERS.error('a field is missing or invalid'),
  401: PAGE_ANSWERS.error('not signed in, or the code is wrong'),
  403: PAGE_ANSWERS.error('the CSRF token does not match'),
};

/**
 * The account page of a signed-in person (`/oauth/account`): their second factors, adding a TOTP
 * authenticator (QR code and key, confirmed with a code), removing one, and new recovery codes.
 * Its forms are bound to the browser as the sign-in forms are: by a standalone interaction and
 * its CSRF token.
 */
export async function accountRoutes(app: FastifyInstance): Promise<void> {
  const { idgate } = app;
  const state = new BrowserState(idgate);
  const flow = new AuthorizationFlow(idgate, state);
  const base = `${new URL(idgate.config.issuer).pathname}/account`;
  const paths = {
    add: `${base}/totp`,
    confirm: `${base}/totp/confirm`,
    remove: `${base}/factors/remove`,
    passkeys: `${base}/passkeys`,
    recoveryCodes: `${base}/recovery-codes`,
  };

  const notSignedIn = (reply: FastifyReply) => {
    const look = flow.look(reply.request);
    return sendPage(
      reply,
      401,
      messagePage({
        look,
        title: look.t.factors.listTitle,
        message: look.t.factors.signInFirst,
        alert: true,
      }),
    );
  };

  const showAccount = async (
    request: FastifyRequest,
    reply: FastifyReply,
    user: UserRecord,
    status = 200,
    extra: { notice?: string; error?: string } = {},
  ) => {
    const interaction = await state.createInteraction(reply, { standalone: true });
    // A new challenge each time the page is shown, bound to the page's interaction.
    const passkey = passkeysPossible(idgate.config.issuer)
      ? {
          action: paths.passkeys,
          options: await idgate.core.factors.startPasskeyRegistration(user, interaction.id),
        }
      : undefined;
    return sendPage(
      reply,
      status,
      accountPage({
        look: flow.look(request),
        username: user.username,
        paths,
        form: { interactionId: interaction.id, csrfToken: interaction.csrfToken },
        factors: await idgate.core.factors.list(user.id),
        recoveryLeft: await idgate.storage.factors.recoveryCodesLeft(user.id),
        passkey,
        ...extra,
      }),
    );
  };

  /** The signed-in user of a form that came from the account page, or the answer to send instead. */
  async function bound<Shape extends typeof Binding>(
    request: FastifyRequest<{ Body: FormBody | undefined }>,
    reply: FastifyReply,
    schema: z.ZodObject<Shape>,
  ): Promise<{ answer: FastifyReply } | { form: FormReader<Shape>; user: UserRecord }> {
    const form = new FormReader<Shape>(schema, request.body ?? {});
    const current = await state.currentSession(request);
    if (current === undefined) return { answer: await notSignedIn(reply) };
    const interaction = await state.loadInteraction(request, present(form.field('interaction')));
    if (interaction === undefined || !isStandalone(interaction.request))
      return { answer: await showAccount(request, reply, current.user, 400) };
    if (!(await state.checkCsrf(interaction, present(form.field('csrf')))))
      return { answer: await flow.errorPage(reply, 403, (t) => t.errors.notFromThisPage) };
    await state.finishInteraction(reply, interaction.id);
    return { form, user: current.user };
  }

  app.get(
    '/oauth/account',
    pageRoute({
      operationId: 'getAccountPage',
      summary: "The signed-in person's account: second factors and recovery codes",
      responses: { 200: PAGE_ANSWERS.page('the account page'), 401: PAGE_ANSWERS.error('not signed in') },
    }),
    async (request, reply) => {
      const current = await state.currentSession(request);
      if (current === undefined) return notSignedIn(reply);
      return showAccount(request, reply, current.user);
    },
  );

  const showEnrolment = async (
    request: FastifyRequest,
    reply: FastifyReply,
    user: UserRecord,
    name: string,
    status: number,
    error?: string,
  ) => {
    const enrolment = await idgate.core.factors.startTotp(user, name);
    const interaction = await state.createInteraction(reply, { standalone: true });
    return sendPage(
      reply,
      status,
      totpEnrolmentPage({
        look: flow.look(request),
        action: paths.confirm,
        form: { interactionId: interaction.id, csrfToken: interaction.csrfToken },
        ...enrolment,
        error,
      }),
    );
  };

  app.post<{ Body: FormBody | undefined }>(
    '/oauth/account/totp',
    pageRoute({
      operationId: 'startTotpEnrolment',
      summary: 'Start adding an authenticator app',
      body: { form: AddForm },
      responses: { ...formAnswers, 409: PAGE_ANSWERS.error('a second factor of that name exists') },
    }),
    async (request, reply) => {
      const got = await bound(request, reply, AddForm);
      if ('answer' in got) return got.answer;
      const { t } = flow.look(request);
      const name = present(got.form.field('name'));
      if (name === undefined)
        return showAccount(request, reply, got.user, 400, { error: t.factors.nameInvalid });
      try {
        return await showEnrolment(request, reply, got.user, name, 200);
      } catch (error) {
        if (!(error instanceof StorageConflictError)) throw error;
        return showAccount(request, reply, got.user, 409, { error: t.factors.nameTaken });
      }
    },
  );

  app.post<{ Body: FormBody | undefined }>(
    '/oauth/account/totp/confirm',
    pageRoute({
      operationId: 'confirmTotpEnrolment',
      summary: 'Confirm an authenticator app with its first code',
      body: { form: ConfirmForm },
      responses: formAnswers,
    }),
    async (request, reply) => {
      const got = await bound(request, reply, ConfirmForm);
      if ('answer' in got) return got.answer;
      const { t } = flow.look(request);
      const factorId = present(got.form.field('factor'));
      const code = present(got.form.field('code'));
      const factor =
        factorId === undefined ? undefined : await idgate.storage.factors.findById(got.user.id, factorId);
      if (factor === undefined || factor.confirmedAt !== null || code === undefined)
        return showAccount(request, reply, got.user, 400, { error: t.factors.wrongCode });
      const caller = { ...requestOrigin(request), address: request.ip };
      const done = await idgate.core.factors.confirmTotp(got.user, factor.id, code, caller);
      if (!done.ok) return showEnrolment(request, reply, got.user, factor.name, 401, t.factors.wrongCode);
      if (done.recoveryCodes === null)
        return showAccount(request, reply, got.user, 200, { notice: t.factors.enrolled });
      const look = flow.look(request);
      return sendPage(
        reply,
        200,
        recoveryCodesPage({ look, codes: done.recoveryCodes, next: { href: base } }),
      );
    },
  );

  app.post<{ Body: FormBody | undefined }>(
    '/oauth/account/passkeys',
    pageRoute({
      operationId: 'registerPasskey',
      summary: 'Add a passkey or security key',
      description:
        "The browser's answer to the account page's WebAuthn registration options (a discoverable credential, user verification required), verified for the issuer's origin and RP ID and the page's single-use challenge.",
      body: { form: PasskeyForm },
      responses: {
        ...formAnswers,
        401: PAGE_ANSWERS.error('not signed in, or the answer was refused (the message says why)'),
        409: PAGE_ANSWERS.error('a second factor of that name exists'),
      },
    }),
    async (request, reply) => {
      const got = await bound(request, reply, PasskeyForm);
      if ('answer' in got) return got.answer;
      const { t } = flow.look(request);
      const name = present(got.form.field('name'));
      const answer = present(got.form.field('credential'));
      const interactionId = present(got.form.field('interaction')) as string;
      if (name === undefined)
        return showAccount(request, reply, got.user, 400, { error: t.factors.nameInvalid });
      if (answer === undefined)
        return showAccount(request, reply, got.user, 400, { error: t.passkeys.refused.invalid });
      const caller = { ...requestOrigin(request), address: request.ip };
      const done = await idgate.core.factors.finishPasskeyRegistration(
        got.user,
        interactionId,
        name,
        answer,
        caller,
      );
      if (!done.ok)
        return showAccount(request, reply, got.user, done.failure === 'name_taken' ? 409 : 401, {
          error: t.passkeys.refused[done.failure],
        });
      if (done.recoveryCodes === null)
        return showAccount(request, reply, got.user, 200, { notice: t.passkeys.added });
      const look = flow.look(request);
      return sendPage(
        reply,
        200,
        recoveryCodesPage({ look, codes: done.recoveryCodes, next: { href: base } }),
      );
    },
  );

  app.post<{ Body: FormBody | undefined }>(
    '/oauth/account/recovery-codes',
    pageRoute({
      operationId: 'regenerateRecoveryCodes',
      summary: 'Replace the recovery codes with a new set',
      body: { form: BoundForm },
      responses: formAnswers,
    }),
    async (request, reply) => {
      const got = await bound(request, reply, BoundForm);
      if ('answer' in got) return got.answer;
      const caller = { ...requestOrigin(request), address: request.ip };
      const codes = await idgate.core.factors.regenerateRecoveryCodes(got.user, caller);
      const look = flow.look(request);
      return sendPage(reply, 200, recoveryCodesPage({ look, codes, next: { href: base } }));
    },
  );

  app.post<{ Body: FormBody | undefined }>(
    '/oauth/account/factors/remove',
    pageRoute({
      operationId: 'removeOwnFactor',
      summary: 'Remove one of my second factors',
      body: { form: FactorForm },
      responses: formAnswers,
    }),
    async (request, reply) => {
      const got = await bound(request, reply, FactorForm);
      if ('answer' in got) return got.answer;
      const { t } = flow.look(request);
      const factorId = present(got.form.field('factor'));
      const actor = { kind: 'user' as const, id: got.user.id, name: got.user.username };
      const caller = { ...requestOrigin(request), address: request.ip };
      const removed =
        factorId === undefined ? 0 : await idgate.core.factors.remove(got.user, factorId, actor, caller);
      return showAccount(
        request,
        reply,
        got.user,
        removed > 0 ? 200 : 400,
        removed > 0 ? { notice: t.factors.removed } : {},
      );
    },
  );
}
