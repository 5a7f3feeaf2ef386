import {
  AuthorizationError,
  type AuthorizationRequest,
  type InteractionRequest,
  isDeviceApproval,
  isStandalone,
  OAuthProtocolError,
  type PasswordSignIn,
  passkeysPossible,
  wantsMfa,
} from '@idgate/core';
import { FormReader, type FormValues } from '@idgate/schema';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { requestOrigin } from '../../http/caller.js';
import type { FormBody } from '../../http/form.js';
import { AuthorizationFlow } from '../../pages/flow.js';
import { PAGE_ANSWERS, pageRoute, sendPage } from '../../pages/form-action.js';
import { Decision, InteractionId, interactionFields, present } from '../../pages/form-fields.js';
import type { Messages } from '../../pages/i18n.js';
import { resourceTargets } from '../../pages/resource-targets.js';
import { BrowserState, type LiveInteraction } from '../../pages/state.js';
import { consentPage } from '../../pages/views/consent.js';
import { loginPage } from '../../pages/views/login.js';
import { messagePage } from '../../pages/views/message.js';
import { secondFactorUrl } from './second-factor.js';

// The page's query and forms, and what their handlers read the fields with. A field that cannot be
// read is as good as absent: the page answers as it does for one that is missing (see `present`).
const Interaction = InteractionId.describe('the sign-in request (interaction) the form belongs to');
const LoginQuery = z.object({ interaction: Interaction.optional() });
const Csrf = z.string().describe("the form's CSRF token");
const PasskeyForm = z.object({
  interaction: InteractionId.describe('the sign-in request (interaction) the form belongs to'),
  csrf: z.string().describe("the form's CSRF token"),
  credential: z
    .string()
    .max(64 * 1024)
    .describe("the browser's answer to navigator.credentials.get(), as JSON (AuthenticationResponseJSON)"),
});
const LoginForm = z.object({
  interaction: Interaction,
  csrf: Csrf,
  username: z
    .string()
    .trim()
    .overwrite((username) => username.slice(0, 256))
    .min(1)
    .describe('leading and trailing spaces are ignored; at most 256 characters are read'),
  password: z.string().min(1),
  provider: z
    .string()
    .optional()
    .describe('a password identity provider (LDAP) to check the credentials with'),
});
const ConsentForm = z.object({
  interaction: Interaction,
  csrf: Csrf,
  decision: Decision,
});

const EXPIRED = (t: Messages) => t.errors.signInExpired;

/** Where signing in may send the browser next: the client's redirect URI of an authorization request. */
const redirectOf = (stored: InteractionRequest): string | undefined =>
  isStandalone(stored) || isDeviceApproval(stored) ? undefined : stored.redirectUri;

/**
 * The login page the authorize flow lands on (`GET/POST /oauth/login`) and the consent decision
 * (`POST /oauth/consent`). Both forms carry the interaction id and its CSRF token; the
 * interaction is bound to the browser by a cookie.
 */
export async function loginRoutes(app: FastifyInstance): Promise<void> {
  const { idgate } = app;
  const state = new BrowserState(idgate);
  const flow = new AuthorizationFlow(idgate, state);
  /** Finds the interaction a login form was posted for, whatever its step (see `flow.posted`). */
  const anyInteraction = (request: FastifyRequest) => async (id: string | undefined) => {
    const interaction = await state.loadInteraction(request, id);
    return interaction === undefined ? undefined : { interaction };
  };
  const { loginPath } = flow;
  const consentPath = `${new URL(idgate.config.issuer).pathname}/consent`;
  const passkeyPath = `${loginPath}/passkey`;
  const passkeys = passkeysPossible(idgate.config.issuer);
  const clientName = async (stored: InteractionRequest) =>
    isStandalone(stored) ? undefined : (await idgate.storage.clients.findById(stored.clientId))?.name;

  const showLogin = async (
    reply: FastifyReply,
    status: number,
    interaction: LiveInteraction,
    extra: { error?: string; username?: string; provider?: string } = {},
  ) => {
    const enabled = await idgate.providers.enabled();
    const stored = interaction.request;
    const named = (p: (typeof enabled)[number]) => ({
      name: p.config.name,
      displayName: p.config.displayName ?? p.config.name,
    });
    return sendPage(
      reply,
      status,
      loginPage({
        look: flow.look(reply.request),
        action: loginPath,
        interactionId: interaction.id,
        csrfToken: interaction.csrfToken,
        clientName: await clientName(stored),
        providers: enabled
          .filter((p) => p.connector.kind === 'redirect')
          .map((p) => ({
            ...named(p),
            href: `${loginPath}/${p.config.name}?interaction=${encodeURIComponent(interaction.id)}`,
          })),
        passwordProviders: enabled.filter((p) => p.connector.kind === 'password').map(named),
        // A passkey sign-in: a new single-use challenge each time the page is shown.
        passkey: passkeys
          ? {
              action: passkeyPath,
              options: await idgate.core.factors.startPasskeyAssertion(null, interaction.id),
            }
          : undefined,
        ...extra,
      }),
      { formRedirects: [redirectOf(stored)] },
    );
  };

  app.get<{ Querystring: FormValues }>(
    '/oauth/login',
    pageRoute({
      operationId: 'getLoginPage',
      summary: 'The login page',
      description:
        'With ?interaction= (from the authorization or device flow): the sign-in form, or the consent page once signed in. Without: a standalone sign-in (or who is signed in).',
      query: LoginQuery,
      responses: {
        200: PAGE_ANSWERS.page('the login, consent or signed-in page'),
        303: PAGE_ANSWERS.redirect('to the device confirmation page'),
        400: PAGE_ANSWERS.error('the sign-in request expired or was started in another browser'),
      },
    }),
    async (request, reply) => {
      const query = new FormReader(LoginQuery, request.query);
      const sent = query.field('interaction');
      // Without an interaction, a standalone sign-in; one that cannot be read has expired.
      if (sent.ok && sent.value === undefined) {
        const current = await state.currentSession(request);
        if (current !== undefined) {
          const look = flow.look(request);
          const message = look.t.signedInMessage(current.user.username);
          return sendPage(reply, 200, messagePage({ look, title: look.t.signedIn, message }));
        }
        const interaction = await state.createInteraction(reply, { standalone: true });
        return showLogin(reply, 200, interaction);
      }
      const interaction = await state.loadInteraction(request, present(sent));
      if (interaction === undefined) return flow.errorPage(reply, 400, EXPIRED);
      if (interaction.userId === null) return showLogin(reply, 200, interaction);
      const stored = interaction.request;
      if (isDeviceApproval(stored)) return flow.confirmDevice(reply, interaction.id);
      const user = await idgate.storage.users.findById(interaction.userId);
      if (isStandalone(stored) || user === undefined) return flow.errorPage(reply, 400, EXPIRED);
      const client = await idgate.storage.clients.findById(stored.clientId);
      if (client === undefined) return flow.errorPage(reply, 400, EXPIRED);
      return sendPage(
        reply,
        200,
        consentPage({
          look: flow.look(request),
          action: consentPath,
          interactionId: interaction.id,
          csrfToken: interaction.csrfToken,
          clientName: client.name,
          username: user.username,
          scopes: stored.scope,
          targets: await resourceTargets(idgate, stored.resource ?? []),
        }),
        { formRedirects: [stored.redirectUri] },
      );
    },
  );

  app.post<{ Body: FormBody | undefined }>(
    '/oauth/login',
    pageRoute({
      operationId: 'signIn',
      summary: 'Sign in with a username and password',
      body: { form: LoginForm },
      responses: {
        200: PAGE_ANSWERS.page('the consent page, or a standalone sign-in done'),
        303: PAGE_ANSWERS.redirect('back to the application, or on to the next step of the flow'),
        400: PAGE_ANSWERS.error('the sign-in request expired, or a field is missing'),
        401: PAGE_ANSWERS.error('the username or password is wrong'),
        403: PAGE_ANSWERS.error('the CSRF token does not match'),
        429: {
          ...PAGE_ANSWERS.error('too many failed sign-ins: the account is locked for now'),
          headers: { 'Retry-After': 'seconds until the account may sign in again' },
        },
        503: PAGE_ANSWERS.error('the identity provider or the database cannot answer now'),
      },
    }),
    async (request, reply) => {
      const form = new FormReader(LoginForm, request.body ?? {});
      const posted = await flow.posted(reply, interactionFields(form), anyInteraction(request));
      if ('answer' in posted) return posted.answer;
      const { interaction } = posted.found;
      const { t } = flow.look(request);
      const typed = form.field('username');
      const password = form.field('password');
      if (!typed.ok || !password.ok) {
        return showLogin(reply, 400, interaction, {
          error: t.errors.enterCredentials,
          username: typed.ok ? typed.value : '',
        });
      }
      const username = typed.value;
      const providerName = present(form.field('provider'));
      const external =
        providerName === undefined || providerName === 'local' ? undefined : providerName.toLowerCase();
      const shown = { username, ...(external === undefined ? {} : { provider: external }) };
      let login: PasswordSignIn;
      try {
        const { userAgent, requestId, traceId } = requestOrigin(request);
        const asked = interaction.request;
        login = await idgate.core.signIn.password({
          username,
          password: password.value,
          provider: external,
          sourceAddress: request.ip,
          userAgent,
          requestId,
          traceId,
          // The application the person signs in for (none for a sign-in of its own).
          forClient: isStandalone(asked) ? undefined : asked.clientId,
          log: request.log,
        });
      } catch (error) {
        if (!(error instanceof OAuthProtocolError)) throw error;
        return showLogin(reply, 503, interaction, { error: t.errors.directoryDown, ...shown });
      }
      if (!login.ok) {
        switch (login.failure) {
          case 'unknown_provider':
            return showLogin(reply, 400, interaction, {
              error: t.errors.chooseAccount,
              username,
            });
          case 'locked': {
            reply.header('retry-after', String(login.retryAfterSeconds));
            const minutes = Math.ceil(login.retryAfterSeconds / 60);
            return showLogin(reply, 429, interaction, {
              error: t.errors.locked(minutes),
              ...shown,
            });
          }
          default: {
            const messages = {
              disabled: t.errors.disabled,
              not_linked: t.errors.notLinked(idgate.config.ui.productName),
              invalid_credentials: t.errors.invalidCredentials,
            };
            return showLogin(reply, 401, interaction, { error: messages[login.failure], ...shown });
          }
        }
      }
      const stored = interaction.request;
      // A second factor before any session: the password alone signs in no one who has one, or
      // who must, or whom the application asked a second factor of (acr_values, or a cluster that
      // requires one, for a device too).
      const need = await idgate.core.factors.need(login.user.id);
      const asked = !isStandalone(stored) && wantsMfa(stored.acrValues);
      if (need.enrolled || need.required || asked) {
        await idgate.storage.interactions.setPendingUser(
          interaction.id,
          login.user.id,
          login.upstream ?? null,
        );
        return reply.redirect(secondFactorUrl(idgate.config.issuer, interaction.id), 303);
      }
      const session = await state.startSession(request, reply, login.user, login.upstream ?? null, ['pwd']);
      if (isStandalone(stored)) {
        await state.finishInteraction(reply, interaction.id);
        return sendPage(
          reply,
          200,
          messagePage({
            look: flow.look(request),
            title: t.signedIn,
            message: t.signedInMessage(login.user.username),
          }),
        );
      }
      await idgate.storage.interactions.setUser(interaction.id, login.user.id, session.authTime, ['pwd']);
      if (isDeviceApproval(stored)) return flow.confirmDevice(reply, interaction.id);
      return proceedWith(reply, stored, state.authentication(session, login.user, true), interaction.id);
    },
  );

  app.post<{ Body: FormBody | undefined }>(
    '/oauth/login/passkey',
    pageRoute({
      operationId: 'signInWithPasskey',
      summary: 'Sign in with a passkey alone',
      description:
        "The browser's answer to the login page's WebAuthn options (a discoverable credential, user verification required, also from the username field's autofill), for the page's single-use challenge. A multi-factor sign-in by itself: `amr` `hwk user mfa`, `acr` `urn:idgate:acr:mfa`.",
      body: { form: PasskeyForm },
      responses: {
        200: PAGE_ANSWERS.page('the consent page, or a standalone sign-in done'),
        303: PAGE_ANSWERS.redirect('back to the application, or on to the next step of the flow'),
        400: PAGE_ANSWERS.error('the sign-in request expired'),
        401: PAGE_ANSWERS.error('the passkey was refused: the message says why'),
        403: PAGE_ANSWERS.error('the CSRF token does not match'),
      },
    }),
    async (request, reply) => {
      const form = new FormReader(PasskeyForm, request.body ?? {});
      const posted = await flow.posted(reply, interactionFields(form), anyInteraction(request));
      if ('answer' in posted) return posted.answer;
      const { interaction } = posted.found;
      const { t } = flow.look(request);
      const answer = present(form.field('credential'));
      if (answer === undefined)
        return showLogin(reply, 400, interaction, { error: t.passkeys.refused.invalid });
      const check = await idgate.core.factors.verifyPasskey(null, interaction.id, answer, [], {
        ...requestOrigin(request),
        address: request.ip,
      });
      if (!check.ok) return showLogin(reply, 401, interaction, { error: t.passkeys.refused[check.failure] });
      const user = await idgate.storage.users.findById(check.userId);
      if (user === undefined) return flow.errorPage(reply, 400, EXPIRED);
      const stored = interaction.request;
      const session = await state.startSession(request, reply, user, null, check.amr);
      if (isStandalone(stored)) {
        await state.finishInteraction(reply, interaction.id);
        return sendPage(
          reply,
          200,
          messagePage({
            look: flow.look(request),
            title: t.signedIn,
            message: t.signedInMessage(user.username),
          }),
        );
      }
      await idgate.storage.interactions.setUser(interaction.id, user.id, session.authTime, check.amr);
      if (isDeviceApproval(stored)) return flow.confirmDevice(reply, interaction.id);
      return proceedWith(reply, stored, state.authentication(session, user, true), interaction.id);
    },
  );

  app.post<{ Body: FormBody | undefined }>(
    '/oauth/consent',
    pageRoute({
      operationId: 'giveConsent',
      summary: 'Allow or deny an application what it asked for',
      body: { form: ConsentForm },
      responses: {
        303: PAGE_ANSWERS.redirect('back to the redirect URI, with the code or access_denied'),
        400: PAGE_ANSWERS.error('the sign-in request expired'),
        403: PAGE_ANSWERS.error('the CSRF token does not match'),
      },
    }),
    async (request, reply) => {
      const form = new FormReader(ConsentForm, request.body ?? {});
      const interaction = await state.loadInteraction(request, present(form.field('interaction')));
      if (interaction === undefined || interaction.userId === null || interaction.authTime === null) {
        return flow.errorPage(reply, 400, EXPIRED);
      }
      if (!(await state.checkCsrf(interaction, present(form.field('csrf'))))) {
        return flow.errorPage(reply, 403, (t) => t.errors.notFromConsentPage);
      }
      const stored = interaction.request;
      const user = await idgate.storage.users.findById(interaction.userId);
      if (isStandalone(stored) || isDeviceApproval(stored) || user === undefined)
        return flow.errorPage(reply, 400, EXPIRED);
      const current = await state.currentSession(request);
      const authentication = {
        user,
        authTime: interaction.authTime,
        sessionId: current?.session.id ?? null,
        fresh: true,
        // The sign-in's upstream identity, as its session recorded it: only that user's own.
        upstream: current?.user.id === user.id ? (current.session.upstream ?? null) : null,
        amr: interaction.amr ?? null,
      };
      if (present(form.field('decision')) !== 'allow') {
        await state.finishInteraction(reply, interaction.id);
        return flow.fail(
          reply,
          new AuthorizationError(
            'access_denied',
            'the user denied the request',
            stored.redirectUri,
            stored.state,
          ),
        );
      }
      await idgate.core.authorize.consent(
        user.id,
        stored.clientId,
        { scope: stored.scope, resources: stored.resource },
        requestOrigin(request),
      );
      return proceedWith(reply, stored, authentication, interaction.id, true);
    },
  );

  async function proceedWith(
    reply: FastifyReply,
    stored: AuthorizationRequest,
    authentication: Parameters<AuthorizationFlow['proceed']>[3],
    interactionId: string,
    consentGiven = false,
  ): Promise<FastifyReply> {
    const client = await idgate.storage.clients.findById(stored.clientId);
    if (client === undefined) return flow.errorPage(reply, 400, EXPIRED);
    return flow.proceed(reply, stored, client, authentication, { interactionId, consentGiven });
  }
}
