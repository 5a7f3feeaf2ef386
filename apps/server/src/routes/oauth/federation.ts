import {
  ConnectorError,
  type ExternalIdentity,
  grantsRefreshToken,
  issueUserTokens,
  openGrant,
} from '@idgate/core';
import {
  CallbackCodeQuery,
  CallbackErrorQuery,
  CallbackTokenQuery,
  type OAuthErrorCode,
} from '@idgate/schema';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AuthorizationFlow } from '../../browser/flow.js';
import { BrowserState, isStandalone, type StoredRequest } from '../../browser/state.js';
import { mapIdentity } from '../../federation/mapping.js';
import { providerRegistry, type ResolvedProvider } from '../../federation/registry.js';
import { LoginTransactions, TRANSACTION_MESSAGES } from '../../federation/transactions.js';
import type { Services } from '../../services.js';
import { loginThrottle, tokenEndpointContext } from './token-context.js';

type Query = Record<string, string | string[] | undefined>;

const USER_SCOPES = ['openid', 'profile', 'email', 'groups', 'offline_access'];

/** A refusal of the callback: never a 5xx, JSON for programs and a page for browsers. */
class CallbackError extends Error {
  constructor(
    readonly error: OAuthErrorCode,
    readonly description: string,
    readonly status = 400,
  ) {
    super(description);
  }
}

function single(query: Query): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const [name, value] of Object.entries(query)) {
    if (Array.isArray(value))
      throw new CallbackError('invalid_request', `parameter ${name} must not be repeated`);
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
export async function federationRoutes(
  app: FastifyInstance,
  { services }: { services: Services },
): Promise<void> {
  const registry = providerRegistry(services);
  const transactions = new LoginTransactions(services);
  const state = new BrowserState(services);
  const flow = new AuthorizationFlow(services, state);
  const throttle = loginThrottle(services);

  const refuse = (request: FastifyRequest, reply: FastifyReply, error: CallbackError) => {
    reply.header('Cache-Control', 'no-store');
    if (request.headers.accept?.includes('text/html'))
      return flow.errorPage(reply, error.status, `Sign-in failed: ${error.description}.`);
    return reply.status(error.status).send({ error: error.error, error_description: error.description });
  };
  const redirectProvider = async (name: string): Promise<ResolvedProvider> => {
    const provider = await registry.get(name);
    if (provider === undefined)
      throw new CallbackError('invalid_request', `there is no identity provider ${name.slice(0, 64)}`, 404);
    if (provider.config.disabled)
      throw new CallbackError('access_denied', `the identity provider ${provider.config.name} is disabled`);
    if (provider.connector.kind !== 'redirect') {
      throw new CallbackError(
        'invalid_request',
        `${provider.config.name} takes a username and password on the login page`,
      );
    }
    return provider;
  };

  app.get<{ Params: { idp: string }; Querystring: Query }>('/oauth/login/:idp', async (request, reply) => {
    try {
      const provider = await redirectProvider(request.params.idp);
      const { interaction: interactionId } = single(request.query);
      let pending: string | null = null;
      if (interactionId !== undefined) {
        const interaction = await state.loadInteraction(request, interactionId);
        if (interaction === undefined)
          throw new CallbackError(
            'invalid_request',
            'the sign-in request has expired or was started in another browser',
          );
        pending = interaction.id;
      }
      const name = provider.config.name;
      const begun = await transactions.begin(reply, name, pending);
      if (provider.connector.kind !== 'redirect') throw new Error('unreachable');
      const url = await provider.connector.authorizationUrl({
        redirectUri: transactions.redirectUri(name),
        ...begun,
      });
      return reply.header('Cache-Control', 'no-store').redirect(url.toString(), 303);
    } catch (error) {
      return handleFailure(request, reply, error);
    }
  });

  app.get<{ Params: { callback: string }; Querystring: Query }>(
    '/oauth/callback/:callback',
    async (request, reply) => {
      try {
        const provider = await redirectProvider(request.params.callback);
        const name = provider.config.name;
        const query = single(request.query);
        if (query.error !== undefined) {
          const upstream = CallbackErrorQuery.safeParse(query);
          const said = upstream.success ? upstream.data.error : 'error';
          await transactions.complete(request, reply, name, query.state);
          throw new CallbackError(
            'access_denied',
            `${name} answered ${said.replace(/[^\x20-\x7e]/g, '').slice(0, 64)}`,
          );
        }
        const completed = await transactions.complete(request, reply, name, query.state);
        if (!completed.ok)
          throw new CallbackError('invalid_request', TRANSACTION_MESSAGES[completed.failure]);
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
          });
        } else if (token.success) {
          identity = await provider.connector.identityFromAccessToken({
            accessToken: token.data.access_token,
            tokenType: token.data.token_type,
          });
        } else {
          throw new CallbackError(
            'invalid_request',
            'the callback carries neither a code nor an access token',
          );
        }
        return await signedIn(request, reply, provider, identity, transaction.interactionId);
      } catch (error) {
        return handleFailure(request, reply, error);
      }
    },
  );

  async function signedIn(
    request: FastifyRequest,
    reply: FastifyReply,
    provider: ResolvedProvider,
    identity: ExternalIdentity,
    interactionId: string | null,
  ) {
    const attempt = {
      username: identity.username.slice(0, 256),
      sourceAddress: request.ip,
      provider: provider.config.name,
    };
    const mapped = await mapIdentity(identity, provider, services);
    if (!mapped.ok) {
      await throttle.record({ ...attempt, userId: null, success: false, reason: mapped.reason });
      throw new CallbackError(
        'access_denied',
        mapped.reason === 'disabled'
          ? 'the account is disabled'
          : `no account is linked to this ${provider.config.name} identity`,
      );
    }
    const { user } = mapped;
    await throttle.record({ ...attempt, userId: user.id, success: true, reason: null });

    if (interactionId !== null) {
      const interaction = await state.loadInteraction(request, interactionId);
      if (interaction === undefined)
        throw new CallbackError(
          'invalid_request',
          'the sign-in request has expired or was started in another browser',
        );
      const session = await state.startSession(request, reply, user);
      const stored = interaction.request as unknown as StoredRequest;
      if (isStandalone(stored)) {
        await state.finishInteraction(reply, interaction.id);
        return reply.redirect(flow.loginPath, 303);
      }
      await services.storage.interactions.setUser(interaction.id, user.id, session.authTime);
      const client = await services.storage.clients.findById(stored.clientId);
      if (client === undefined)
        throw new CallbackError('invalid_request', 'the application of this sign-in no longer exists');
      return flow.proceed(
        reply,
        stored,
        client,
        { user, authTime: session.authTime, sessionId: session.id, fresh: true },
        { interactionId: interaction.id },
      );
    }

    const clientId = provider.config.tokenClientId ?? services.config.federation.tokenClientId;
    if (clientId === undefined) {
      throw new CallbackError(
        'invalid_request',
        `${provider.config.name} is set up for browser sign-in only: configure tokenClientId to answer tokens`,
      );
    }
    const client = await services.storage.clients.findById(clientId);
    if (client === undefined)
      throw new CallbackError('invalid_request', `the token client ${clientId.slice(0, 64)} does not exist`);
    const context = tokenEndpointContext(services, request, throttle);
    const effective = (await context.storage.users.findById(user.id)) ?? user;
    const scope = USER_SCOPES.filter((s) => client.scopes.includes(s));
    const grant = await openGrant(context, {
      userId: user.id,
      clientId: client.clientId,
      scope,
      authTime: new Date(services.clock.now()),
      sessionId: null,
    });
    const tokens = await issueUserTokens(context, {
      grant,
      client,
      user: effective,
      scope,
      ...(grantsRefreshToken(client, scope, context) ? { refreshScope: scope } : {}),
    });
    return reply.header('Cache-Control', 'no-store').header('Pragma', 'no-cache').send(tokens);
  }

  function handleFailure(request: FastifyRequest, reply: FastifyReply, error: unknown) {
    if (error instanceof CallbackError) return refuse(request, reply, error);
    if (error instanceof ConnectorError) {
      request.log.warn({ err: error, failure: error.failure }, 'external sign-in failed');
      return refuse(request, reply, new CallbackError(error.oauthError, error.message));
    }
    request.log.error({ err: error }, 'external sign-in failed unexpectedly');
    return refuse(
      request,
      reply,
      new CallbackError('temporarily_unavailable', 'the sign-in could not be completed; try again'),
    );
  }
}
