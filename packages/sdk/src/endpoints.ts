import { IdentityProviderName } from '@idgate/schema';
import { IdgateHttpError, IdgateSdkError } from './errors.js';
import { type Parser, send, type TransportOptions } from './http.js';
import type { ExternalLoginOptions, HealthStatus, LogoutParameters, ReadinessStatus } from './types.js';
import { checkedIssuer, issuerOfRoot } from './urls.js';

const HEALTH: Parser<HealthStatus> = {
  safeParse(input) {
    if (typeof input === 'object' && input !== null && (input as { status?: unknown }).status === 'ok')
      return { success: true, data: { status: 'ok' } };
    return {
      success: false,
      error: { issues: [{ code: 'custom', path: ['status'], message: 'must be "ok"' }] },
    };
  },
};

const READINESS: Parser<ReadinessStatus> = {
  safeParse(input) {
    const body = (typeof input === 'object' && input !== null ? input : {}) as Record<string, unknown>;
    const { status, checks } = body;
    if (status !== 'ok' && status !== 'unavailable') {
      return {
        success: false,
        error: { issues: [{ code: 'custom', path: ['status'], message: 'must be "ok" or "unavailable"' }] },
      };
    }
    const entries = typeof checks === 'object' && checks !== null ? Object.entries(checks) : undefined;
    if (entries === undefined || !entries.every(([, state]) => state === 'ok' || state === 'failing')) {
      return {
        success: false,
        error: {
          issues: [{ code: 'custom', path: ['checks'], message: 'must map each check to "ok" or "failing"' }],
        },
      };
    }
    return {
      success: true,
      data: {
        ready: status === 'ok',
        status,
        checks: Object.fromEntries(entries) as ReadinessStatus['checks'],
      },
    };
  },
};

/**
 * The URL of idgate's end-session endpoint (`{issuer}/logout`, discovery's
 * `end_session_endpoint`) with the RP-Initiated Logout parameters: send the browser there to sign
 * the user out of idgate. Nothing is sent; idgate checks the parameters when the browser arrives.
 * @throws IdgateSdkError when a parameter is given but not a non-empty string.
 * @example
 * const url = logoutUrl('https://id.example.com/oauth', {
 *   idTokenHint: tokens.id_token,
 *   postLogoutRedirectUri: 'https://app.example.com/signed-out',
 * });
 * response.redirect(url.href);
 */
export function logoutUrl(issuer: string | URL, parameters: LogoutParameters = {}): URL {
  const url = new URL(`${checkedIssuer(issuer)}/logout`);
  const fields = [
    ['id_token_hint', parameters.idTokenHint, 'idTokenHint'],
    ['post_logout_redirect_uri', parameters.postLogoutRedirectUri, 'postLogoutRedirectUri'],
    ['state', parameters.state, 'state'],
    ['client_id', parameters.clientId, 'clientId'],
  ] as const;
  for (const [name, value, option] of fields) {
    if (value === undefined) continue;
    if (typeof value !== 'string' || value === '')
      throw new IdgateSdkError(`${option} must be a non-empty string`, { endpoint: 'GET /oauth/logout' });
    url.searchParams.set(name, value);
  }
  return url;
}

/**
 * The URL that starts a sign-in at one of idgate's external identity providers
 * (`{issuer}/login/{provider}`): idgate redirects the browser to the provider, and its callback
 * either continues the authorization request of `options.interaction` or answers tokens.
 * @throws IdgateSdkError when `provider` cannot be an identity provider name.
 * @example const url = externalLoginUrl('https://id.example.com/oauth', 'github');
 */
export function externalLoginUrl(
  issuer: string | URL,
  provider: string,
  options: ExternalLoginOptions = {},
): URL {
  const endpoint = 'GET /oauth/login/{provider}';
  if (typeof provider !== 'string' || !IdentityProviderName.safeParse(provider.toLowerCase()).success) {
    throw new IdgateSdkError(
      'provider must be an identity provider name: letters, digits and -, starting with a letter',
      { endpoint },
    );
  }
  const url = new URL(`${checkedIssuer(issuer)}/login/${provider}`);
  if (options.interaction !== undefined) {
    if (typeof options.interaction !== 'string' || options.interaction === '')
      throw new IdgateSdkError('interaction must be a non-empty string', { endpoint });
    url.searchParams.set('interaction', options.interaction);
  }
  return url;
}

/**
 * The probes of the client ({@link IdgateClient.health}, {@link IdgateClient.readiness}) and its
 * URL builders, over the client's transport.
 */
export class EndpointMethods {
  readonly #transport: TransportOptions;

  constructor(transport: TransportOptions) {
    this.#transport = transport;
  }

  logoutUrl(parameters: LogoutParameters = {}): URL {
    return logoutUrl(issuerOfRoot(this.#transport.root), parameters);
  }

  externalLoginUrl(provider: string, options: ExternalLoginOptions = {}): URL {
    return externalLoginUrl(issuerOfRoot(this.#transport.root), provider, options);
  }

  health(): Promise<HealthStatus> {
    return send(this.#transport, {
      method: 'GET',
      path: 'healthz',
      schema: HEALTH,
      schemaName: 'HealthStatus',
      secrets: [],
    });
  }

  async readiness(): Promise<ReadinessStatus> {
    try {
      return await send(this.#transport, {
        method: 'GET',
        path: 'readyz',
        schema: READINESS,
        schemaName: 'ReadinessStatus',
        secrets: [],
        retry: 0,
      });
    } catch (error) {
      // 503 is an answer, not a failure: the server says which check fails.
      if (error instanceof IdgateHttpError && error.status === 503) {
        const parsed = READINESS.safeParse(error.body);
        if (parsed.success) return parsed.data;
      }
      throw error;
    }
  }
}
