import {
  type ExternalIdentity,
  type IdentityProvider,
  isDeviceApproval,
  isStandalone,
  OAuthProtocolError,
  wantsMfa,
} from '@idgate/core';
import { CallbackCodeQuery, CallbackErrorQuery, CallbackTokenQuery, TokenResponse } from '@idgate/schema';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { LoginTransactions, TRANSACTION_MESSAGES } from '../../federation/transactions.js';
import { callerOf } from '../../http/caller.js';
import type { ResponseDoc, RouteDoc } from '../../openapi/route-doc.js';
import { AuthorizationFlow } from '../../pages/flow.js';
import type { Messages } from '../../pages/i18n.js';
import { BrowserState, type LiveInteraction } from '../../pages/state.js';
import { secondFactorUrl } from './second-factor.js';

type Query = Record<string, string | string[] | undefined>;

// Any of the three forms of the callback query: the code, the token, or the provider's error.
const CallbackParameters = z.object({
  ...z.object(CallbackCodeQuery.shape).partial().shape,
  ...z.object(CallbackTokenQuery.shape).partial().shape,
  ...z.object(CallbackErrorQuery.shape).partial().shape,
});

/** A refusal: JSON to programs, a page to a browser that accepts text/html. */
const refused = (description: string, codes: NonNullable<ResponseDoc['oauthError']>): ResponseDoc => ({
  description,
  oauthError: codes,
  html: true,
});
const REDIRECT: NonNullable<ResponseDoc['headers']> = { Location: 'where the browser goes next' };
const federationDoc = (doc: Omit<RouteDoc, 'tags' | 'security'>): RouteDoc => ({
  tags: ['pages'],
  security: ['browserSession', 'anonymous'],
  ...doc,
});

// A refused sign-in answers 400, as the token endpoint's errors do (RFC 6749 §5.2), not 403.
const denied = (description: string) => new OAuthProtocolError('access_denied', description, { status: 400 });

function single(query: Query): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const [name, value] of Object.entries(query)) {
    if (Array.isArray(value))
      throw new OAuthProtocolError('invalid_request', `parameter ${name} must not be repeated`);
    if (value !== undefined && value !== '') fields[name] = value;
  }
  return fields;
}

/**
 * `GET /oauth/login/{idp}` starts a sign-in at an external provider; `GET /oauth/callback/{callback}`
 * finishes it, with the authorization-code form or the token form of the callback query. A sign-in
 * that came from an authorization request continues it (consent, code, back to the client);
 * otherwise the callback answers the token response as JSON.
 */
export async function federationRoutes(app: FastifyInstance): Promise<void> {
  const { idgate } = app;
  const transactions = new LoginTransactions(idgate);
  const state = new BrowserState(idgate);
  const flow = new AuthorizationFlow(idgate, state);

  const redirectProvider = async (name: string): Promise<IdentityProvider> => {
    const provider = await idgate.providers.get(name);
    if (provider === undefined)
      throw new OAuthProtocolError('invalid_request', `there is no identity provider ${name.slice(0, 64)}`, {
        status: 404,
      });
    if (provider.config.disabled) throw denied(`the identity provider ${provider.config.name} is disabled`);
    if (provider.connector.kind !== 'redirect') {
      throw new OAuthProtocolError(
        'invalid_request',
        `${provider.config.name} takes a username and password on the login page`,
      );
    }
    return provider;
  };

  // Refusals answer JSON to programs and a page to a person's browser (chosen by Accept).
  const options = {
    config: { errorFormat: ['oauth', 'html'] as const, errorPageTitle: (t: Messages) => t.signInFailed },
    onRequest: async (_request: FastifyRequest, reply: FastifyReply) => {
      reply.header('cache-control', 'no-store');
    },
  };

  app.get<{ Params: { idp: string }; Querystring: Query }>(
    '/oauth/login/:idp',
    {
      ...options,
      config: {
        ...options.config,
        doc: federationDoc({
          operationId: 'startExternalSignIn',
          summary: 'Sign in at an external identity provider (OIDC, GitHub, GitLab)',
          params: z.object({ idp: z.string().describe("the identity provider's name") }),
          query: z.object({
            interaction: z
              .string()
              .optional()
              .describe('the sign-in request (from the login page) to continue after'),
          }),
          responses: {
            303: { description: "to the provider's authorization endpoint", headers: REDIRECT },
            400: refused('the provider is disabled, takes a password, or the sign-in request expired', [
              'invalid_request',
              'access_denied',
            ]),
            404: refused('there is no such identity provider', ['invalid_request']),
          },
        }),
      },
    },
    async (request, reply) => {
      const provider = await redirectProvider(request.params.idp);
      const { interaction: interactionId } = single(request.query);
      let pending: string | null = null;
      if (interactionId !== undefined) {
        const interaction = await state.loadInteraction(request, interactionId);
        if (interaction === undefined)
          throw new OAuthProtocolError(
            'invalid_request',
            'the sign-in request has expired or was started in another browser',
          );
        pending = interaction.id;
      } else {
        // Answered as tokens: refuse now, not after the user went through the upstream sign-in.
        await tokenClientOf(provider);
      }
      const name = provider.config.name;
      const begun = await transactions.begin(reply, name, pending);
      if (provider.connector.kind !== 'redirect') throw new Error('unreachable');
      const url = await provider.connector.authorizationUrl({
        redirectUri: transactions.redirectUri(name),
        ...begun,
      });
      return reply.header('cache-control', 'no-store').redirect(url.toString(), 303);
    },
  );

  app.get<{ Params: { callback: string }; Querystring: Query }>(
    '/oauth/callback/:callback',
    {
      ...options,
      config: {
        ...options.config,
        doc: federationDoc({
          operationId: 'finishExternalSignIn',
          summary: "An external identity provider's callback",
          description:
            'The provider sends the browser back with a code (or an access token, or its error). A sign-in that came from an authorization request continues it (consent, code, back to the client); otherwise the answer is the token response, as JSON.',
          params: z.object({ callback: z.string().describe("the identity provider's name") }),
          query: CallbackParameters,
          responses: {
            200: {
              description: 'a standalone sign-in: the tokens of the configured token client',
              json: TokenResponse,
              headers: { 'Cache-Control': 'no-store' },
            },
            303: { description: 'on with the authorization or device flow', headers: REDIRECT },
            400: refused(
              'the provider refused, the account is not linked or disabled, or the callback is not valid',
              ['invalid_request', 'access_denied'],
            ),
            404: refused('there is no such identity provider', ['invalid_request']),
          },
        }),
      },
    },
    async (request, reply) => {
      const provider = await redirectProvider(request.params.callback);
      const name = provider.config.name;
      const query = single(request.query);
      if (query.error !== undefined) {
        const upstream = CallbackErrorQuery.safeParse(query);
        const said = upstream.success ? upstream.data.error : 'error';
        const refused = await transactions.complete(request, reply, name, query.state);
        // Only a sign-in this browser started here is recorded: a forged callback is no sign-in.
        if (refused.ok) {
          const reason = said
            .toLowerCase()
            .replace(/[^a-z0-9_]/g, '_')
            .slice(0, 64);
          const { interactionId } = refused.transaction;
          const interaction =
            interactionId === null ? undefined : await state.loadInteraction(request, interactionId);
          await idgate.core.signIn.upstreamRefusal(
            name,
            reason,
            callerOf(request),
            signInClient(provider, interactionId, interaction),
          );
        }
        throw denied(`${name} answered ${said.replace(/[^\x20-\x7e]/g, '').slice(0, 64)}`);
      }
      const completed = await transactions.complete(request, reply, name, query.state);
      if (!completed.ok)
        throw new OAuthProtocolError('invalid_request', TRANSACTION_MESSAGES[completed.failure]);
      const { transaction } = completed;
      if (provider.connector.kind !== 'redirect') throw new Error('unreachable');

      let identity: ExternalIdentity;
      const code = CallbackCodeQuery.safeParse(query);
      const token = CallbackTokenQuery.safeParse(query);
      if (code.success) {
        identity = await provider.connector.exchangeCode({
          code: code.data.code,
          redirectUri: transactions.redirectUri(name),
          codeVerifier: transaction.codeVerifier,
          nonce: transaction.nonce,
          iss: code.data.iss,
        });
      } else if (token.success) {
        identity = await provider.connector.identityFromAccessToken({
          accessToken: token.data.access_token,
          tokenType: token.data.token_type,
        });
      } else {
        throw new OAuthProtocolError(
          'invalid_request',
          'the callback carries neither a code nor an access token',
        );
      }
      return await signedIn(request, reply, provider, identity, transaction.interactionId);
    },
  );

  /** The client a sign-in answered as tokens (not continuing an authorization request) is issued to. */
  async function tokenClientOf(provider: IdentityProvider) {
    const clientId = provider.config.tokenClientId ?? idgate.config.federation.tokenClientId;
    if (clientId === undefined) {
      throw new OAuthProtocolError(
        'invalid_request',
        `${provider.config.name} is set up for browser sign-in only: configure tokenClientId to answer tokens`,
      );
    }
    const client = await idgate.storage.clients.findById(clientId);
    if (client === undefined)
      throw new OAuthProtocolError(
        'invalid_request',
        `the token client ${clientId.slice(0, 64)} does not exist`,
      );
    return client;
  }

  /**
   * The client a sign-in through `provider` is for, for the audit trail: the application of the
   * interaction it continues, or the token client of a sign-in answered as tokens; null for a
   * sign-in of its own (or an interaction that expired).
   */
  function signInClient(
    provider: IdentityProvider,
    interactionId: string | null,
    interaction: LiveInteraction | undefined,
  ): string | null {
    if (interactionId === null)
      return provider.config.tokenClientId ?? idgate.config.federation.tokenClientId ?? null;
    if (interaction === undefined || isStandalone(interaction.request)) return null;
    return interaction.request.clientId;
  }

  async function signedIn(
    request: FastifyRequest,
    reply: FastifyReply,
    provider: IdentityProvider,
    identity: ExternalIdentity,
    interactionId: string | null,
  ) {
    const interaction =
      interactionId === null ? undefined : await state.loadInteraction(request, interactionId);
    const mapped = await idgate.core.signIn.external(
      identity,
      provider,
      callerOf(request),
      signInClient(provider, interactionId, interaction),
    );
    if (!mapped.ok) {
      throw denied(
        mapped.reason === 'disabled'
          ? 'the account is disabled'
          : `no account is linked to this ${provider.config.name} identity`,
      );
    }
    // The upstream identity goes on with the session (then its codes and device approvals) or
    // the token answer's grant, so every grant of this sign-in re-checks the person upstream.
    const { user, upstream, amr } = mapped;

    if (interactionId !== null) {
      if (interaction === undefined)
        throw new OAuthProtocolError(
          'invalid_request',
          'the sign-in request has expired or was started in another browser',
        );
      const stored = interaction.request;
      // A second factor of idgate's own before any session, as after a password, unless the
      // upstream's counts here (its `trustUpstreamMfa`): for a user who has one, or must, or whom
      // the application asked a second factor of (acr_values).
      const need = await idgate.core.factors.need(user.id);
      const asked = !isStandalone(stored) && !isDeviceApproval(stored) && wantsMfa(stored.acrValues);
      if (amr?.includes('mfa') !== true && (need.enrolled || need.required || asked)) {
        await idgate.storage.interactions.setPendingUser(interaction.id, user.id, upstream);
        return reply.redirect(secondFactorUrl(idgate.config.issuer, interaction.id), 303);
      }
      const session = await state.startSession(request, reply, user, upstream, amr);
      if (isStandalone(stored)) {
        await state.finishInteraction(reply, interaction.id);
        return reply.redirect(flow.loginPath, 303);
      }
      await idgate.storage.interactions.setUser(interaction.id, user.id, session.authTime, amr);
      if (isDeviceApproval(stored)) return flow.confirmDevice(reply, interaction.id);
      const client = await idgate.storage.clients.findById(stored.clientId);
      if (client === undefined)
        throw new OAuthProtocolError('invalid_request', 'the application of this sign-in no longer exists');
      return flow.proceed(reply, stored, client, state.authentication(session, user, true), {
        interactionId: interaction.id,
      });
    }

    const client = await tokenClientOf(provider);
    const tokens = await idgate.core.federation.issueTokens(user, client, upstream, callerOf(request), amr);
    return reply.header('cache-control', 'no-store').header('pragma', 'no-cache').send(tokens);
  }
}
