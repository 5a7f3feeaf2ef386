import type { OidcProviderConfig } from '@idgate/schema';
import * as oauth from 'oauth4webapi';
import {
  ConnectorError,
  type ConnectorFailure,
  type ExternalIdentity,
  type RedirectConnector,
  recheckOutcome,
} from './types.js';
import { redact, Upstream, type UpstreamOptions } from './upstream.js';

/** One request to the upstream, for the messages of its failures. */
interface Step {
  /** The request, as in "answered the token request with no JSON". */
  what: string;
  /** An answer that does not check out, as in "sent a token response that does not verify". */
  unexpected: string;
  /**
   * An answer other than 200, with the upstream's OAuth error (or the status) as `detail`, and
   * its `error` code when it sent one.
   */
  refused: (detail: string, status: number, error: string | undefined) => [ConnectorFailure, string];
}

function claimString(claims: Record<string, unknown>, name: string): string | null {
  const value = claims[name];
  return typeof value === 'string' && value !== '' ? value : null;
}

function claimGroups(claims: Record<string, unknown>, name: string): string[] {
  const value = claims[name];
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((g): g is string => typeof g === 'string' && g !== '') : [];
}

/**
 * The upstream `amr` and `acr` of a verified ID token's claims: strings only, at most 32 of the
 * `amr` values, each at most 256 characters (an upstream cannot grow what is kept).
 */
function upstreamAuthentication(claims: Record<string, unknown>): { amr: string[]; acr: string | null } {
  const fits = (value: unknown): value is string =>
    typeof value === 'string' && value !== '' && value.length <= 256;
  const amr = Array.isArray(claims.amr) ? claims.amr.filter(fits).slice(0, 32) : [];
  return { amr, acr: fits(claims.acr) ? claims.acr : null };
}

/** The upstream state of an OIDC identity: its refresh token. */
const stateOf = (refreshToken: string) => JSON.stringify({ refreshToken });

function refreshTokenOf(state: string): string | undefined {
  try {
    const parsed: unknown = JSON.parse(state);
    const token = (parsed as { refreshToken?: unknown } | null)?.refreshToken;
    return typeof token === 'string' && token !== '' ? token : undefined;
  } catch {
    return undefined;
  }
}

/** The issuer as configured, and the same with its trailing slash added or taken away. */
function issuerSpellings(issuer: string): [URL, URL | undefined] {
  const configured = new URL(issuer);
  const other = new URL(configured.href.endsWith('/') ? configured.href.slice(0, -1) : `${configured.href}/`);
  return [configured, other.href === configured.href ? undefined : other];
}

/**
 * An upstream OpenID Connect provider, spoken to through oauth4webapi: discovery (kept, and tried
 * again after a failure), authorization code with PKCE (S256), state and nonce; the ID token is
 * checked for `iss`, `aud`, `azp`, `exp`, `nonce` and its signature against the upstream's JWKS
 * (kept for five minutes, fetched again for an unknown key). A presented upstream access token is
 * trusted only after introspection (when the upstream offers it) says it is active and ours, and
 * the userinfo endpoint answers for it.
 * @example const connector = createOidcConnector(config); const url = await connector.authorizationUrl({ redirectUri, state, nonce, codeChallenge });
 */
export function createOidcConnector(
  config: OidcProviderConfig,
  options: UpstreamOptions = {},
): RedirectConnector {
  const name = `the identity provider ${config.name}`;
  const upstream = new Upstream(name, options, [config.clientSecret]);
  const client: oauth.Client = { client_id: config.clientId };
  const insecure = new URL(config.issuer).protocol === 'http:';
  // The configuration takes an http: issuer (a private network, a test upstream), which
  // oauth4webapi refuses unless told; an https: issuer's endpoints must all be https:.
  const http = { [oauth.customFetch]: upstream.fetch, [oauth.allowInsecureRequests]: insecure };
  let discovered: Promise<oauth.AuthorizationServer> | undefined;

  /**
   * One request and oauth4webapi's check of the answer, its failures as ConnectorErrors. The
   * reason oauth4webapi gives goes into the message redacted; its error is only described in the
   * cause, as its fields hold bodies, claims and the request's parameters.
   */
  async function exchange<T>(
    step: Step,
    secrets: readonly string[],
    send: () => Promise<Response>,
    check: (answer: Response) => Promise<T>,
  ): Promise<T> {
    let status: number | undefined;
    try {
      const answer = await send();
      status = answer.status;
      return await check(answer);
    } catch (error) {
      if (error instanceof ConnectorError) throw error;
      if (status !== undefined && status !== 200) {
        const said = error instanceof oauth.ResponseBodyError ? error : undefined;
        const [failure, message] = step.refused(upstream.detail(said, secrets), status, said?.error);
        throw upstream.error(failure, message, error, secrets);
      }
      const code = error instanceof oauth.OperationProcessingError ? error.code : undefined;
      const reason = redact(error instanceof Error ? error.message : undefined, secrets);
      const message =
        code === oauth.RESPONSE_IS_NOT_JSON || code === oauth.PARSE_ERROR
          ? `${name} answered the ${step.what} request with no JSON`
          : `${step.unexpected}${reason === '' ? '' : ` (${reason})`}`;
      throw upstream.error('invalid_upstream_response', message, error, secrets);
    }
  }

  const [configured, respelled] = issuerSpellings(config.issuer);
  const discovery: Step = {
    what: 'discovery',
    unexpected: `${name} has no usable discovery document`,
    refused: (_, status) => [
      'invalid_upstream_response',
      `${name} has no discovery document (HTTP ${status})`,
    ],
  };
  /** OIDC Discovery §4.3: the document must name the issuer it was fetched for. */
  const checkDiscovery = async (answer: Response) => {
    try {
      return await oauth.processDiscoveryResponse(configured, answer.clone());
    } catch (error) {
      // Issuers a trailing slash apart were always taken, and configurations rely on it.
      const mismatch =
        error instanceof oauth.OperationProcessingError && error.code === oauth.JSON_ATTRIBUTE_COMPARISON;
      if (!mismatch || respelled === undefined) throw error;
      return await oauth.processDiscoveryResponse(respelled, answer);
    }
  };
  const discover = () => {
    if (discovered === undefined) {
      discovered = exchange(discovery, [], () => oauth.discoveryRequest(configured, http), checkDiscovery);
      // A failed discovery is tried again next time rather than kept.
      discovered.catch(() => {
        discovered = undefined;
      });
    }
    return discovered;
  };

  /** RFC 6749 §2.3.1: HTTP Basic unless the upstream takes only client_secret_post of the two. */
  const clientAuth = (methods: string[] | undefined) =>
    methods !== undefined &&
    !methods.includes('client_secret_basic') &&
    methods.includes('client_secret_post')
      ? oauth.ClientSecretPost(config.clientSecret)
      : oauth.ClientSecretBasic(config.clientSecret);

  const identityFrom = (claims: Record<string, unknown>, subject: string): ExternalIdentity => ({
    subject,
    username: claimString(claims, config.claims.username) ?? subject,
    email: claimString(claims, config.claims.email),
    emailVerified: claims.email_verified === true,
    displayName: claimString(claims, config.claims.name),
    groups: claimGroups(claims, config.claims.groups),
  });

  /** Userinfo for the access token; `subject`, when known, must be who it is about (OIDC Core §5.3.2). */
  const userinfo = async (
    as: oauth.AuthorizationServer,
    accessToken: string,
    subject: string | typeof oauth.skipSubjectCheck,
    failure: 'invalid_upstream_token' | 'upstream_error',
  ) => {
    if (as.userinfo_endpoint === undefined)
      throw new ConnectorError(failure, `${name} has no userinfo endpoint to confirm the token`);
    const step: Step = {
      what: 'userinfo',
      unexpected: `${name} answered userinfo with something unusable`,
      refused: (_, status) =>
        status === 401 || status === 403
          ? [failure, `${name} did not accept the access token`]
          : ['invalid_upstream_response', `${name} answered userinfo with HTTP ${status}`],
    };
    return exchange(
      step,
      [accessToken],
      () => oauth.userInfoRequest(as, client, accessToken, http),
      async (answer) => {
        const info = await oauth.processUserInfoResponse(as, client, subject, answer);
        // A signed userinfo answer (OIDC Core §5.3.2) is only as good as its signature.
        if (/^application\/jwt\s*(;|$)/i.test(answer.headers.get('content-type') ?? ''))
          await oauth.validateApplicationLevelSignature(as, answer, http);
        return info;
      },
    );
  };

  return {
    kind: 'redirect',

    async authorizationUrl({ redirectUri, state, nonce, codeChallenge }) {
      const { authorization_endpoint: endpoint } = await discover();
      if (endpoint === undefined || !URL.canParse(endpoint))
        throw new ConnectorError('invalid_upstream_response', `${name} has no usable authorization endpoint`);
      const url = new URL(endpoint);
      url.searchParams.set('response_type', 'code');
      url.searchParams.set('client_id', config.clientId);
      url.searchParams.set('redirect_uri', redirectUri);
      url.searchParams.set('scope', config.scopes.join(' '));
      url.searchParams.set('state', state);
      url.searchParams.set('nonce', nonce);
      url.searchParams.set('code_challenge', codeChallenge);
      url.searchParams.set('code_challenge_method', 'S256');
      return url;
    },

    async exchangeCode({ code, redirectUri, codeVerifier, nonce, iss }) {
      const as = await discover();
      // RFC 9207 §2.4 (mix-up defence): an `iss` the callback carries must be this upstream's
      // issuer, and one is required when the upstream says it sends it. The server has checked
      // `state` already.
      let callback: URLSearchParams;
      try {
        callback = oauth.validateAuthResponse(
          as,
          client,
          new URLSearchParams(iss === undefined ? { code } : { code, iss }),
          oauth.skipStateCheck,
        );
      } catch {
        // oauth4webapi's error holds the parameters, the code among them: not kept as the cause.
        const said =
          iss === undefined
            ? 'carries no iss parameter, which it says it sends (RFC 9207)'
            : 'names another issuer in its iss parameter (RFC 9207)';
        throw new ConnectorError('upstream_error', `the authorization response from ${name} ${said}`);
      }
      const step: Step = {
        what: 'token',
        unexpected: `${name} sent a token response that does not verify`,
        refused: (detail) => ['upstream_error', `${name} refused the sign-in${detail}`],
      };
      const tokens = await exchange(
        step,
        [code, codeVerifier],
        () =>
          oauth.authorizationCodeGrantRequest(
            as,
            client,
            clientAuth(as.token_endpoint_auth_methods_supported),
            callback,
            redirectUri,
            codeVerifier,
            http,
          ),
        async (answer) => {
          const result = await oauth.processAuthorizationCodeResponse(as, client, answer, {
            expectedNonce: nonce,
            requireIdToken: true,
          });
          // oauth4webapi checks the claims; the signature is checked here, against the JWKS.
          await oauth.validateApplicationLevelSignature(as, answer, http);
          return result;
        },
      );
      const claims = oauth.getValidatedIdTokenClaims(tokens);
      if (claims === undefined || claims.sub === '')
        throw new ConnectorError('invalid_upstream_response', `${name} sent an ID token without a subject`);
      // The upstream refresh token is what lets a refresh of idgate's grant ask again later.
      const state =
        tokens.refresh_token === undefined ? {} : { upstreamState: stateOf(tokens.refresh_token) };
      // How the person signed in upstream: from the verified ID token alone, whatever userinfo says.
      const signedIn = { ...state, upstreamAuthentication: upstreamAuthentication(claims) };
      if (!config.useUserinfo) return { ...identityFrom(claims, claims.sub), ...signedIn };
      const info = await userinfo(as, tokens.access_token, claims.sub, 'upstream_error');
      return { ...identityFrom({ ...claims, ...info }, claims.sub), ...signedIn };
    },

    /**
     * The upstream's refresh grant (RFC 6749 §6) with the stored refresh token, then the claims of
     * the new ID token (and userinfo, when configured or when no ID token came back). A refused
     * refresh token (`invalid_grant`) or a userinfo 401 means the upstream no longer knows the
     * person; other refusals (a wrong client secret) say nothing about them.
     */
    async refresh({ subject, state }) {
      const refreshToken = refreshTokenOf(state);
      if (refreshToken === undefined) return { status: 'unavailable', reason: 'no upstream refresh token' };
      return recheckOutcome(subject, async () => {
        const as = await discover();
        const step: Step = {
          what: 'token',
          unexpected: `${name} sent a refresh response that does not verify`,
          refused: (detail, _status, error) =>
            error === 'invalid_grant'
              ? ['invalid_upstream_token', `${name} refused the refresh token${detail}`]
              : ['upstream_unavailable', `${name} refused idgate's refresh request${detail}`],
        };
        const tokens = await exchange(
          step,
          [refreshToken],
          () =>
            oauth.refreshTokenGrantRequest(
              as,
              client,
              clientAuth(as.token_endpoint_auth_methods_supported),
              refreshToken,
              http,
            ),
          async (answer) => {
            const result = await oauth.processRefreshTokenResponse(as, client, answer);
            if (result.id_token !== undefined)
              await oauth.validateApplicationLevelSignature(as, answer, http);
            return result;
          },
        );
        const claims = oauth.getValidatedIdTokenClaims(tokens);
        if (claims !== undefined && claims.sub !== subject)
          throw new ConnectorError('invalid_upstream_token', `${name} refreshed another subject`);
        const rotated = { upstreamState: stateOf(tokens.refresh_token ?? refreshToken) };
        if (claims !== undefined && !config.useUserinfo)
          return { ...identityFrom(claims, subject), ...rotated };
        const info = await userinfo(as, tokens.access_token, subject, 'invalid_upstream_token');
        return { ...identityFrom({ ...claims, ...info }, subject), ...rotated };
      });
    },

    async identityFromAccessToken({ accessToken, tokenType }) {
      if (tokenType.toLowerCase() !== 'bearer')
        throw new ConnectorError('invalid_upstream_token', `only Bearer tokens of ${name} are accepted`);
      const as = await discover();
      let subject: string | typeof oauth.skipSubjectCheck = oauth.skipSubjectCheck;
      if (as.introspection_endpoint !== undefined) {
        const step: Step = {
          what: 'introspection',
          unexpected: `${name} answered the introspection request with something unusable`,
          refused: () => ['invalid_upstream_token', `${name} does not confirm the access token`],
        };
        const methods =
          as.introspection_endpoint_auth_methods_supported ?? as.token_endpoint_auth_methods_supported;
        const introspected = await exchange(
          step,
          [accessToken],
          () =>
            oauth.introspectionRequest(as, client, clientAuth(methods), accessToken, {
              ...http,
              additionalParameters: { token_type_hint: 'access_token' },
            }),
          (answer) => oauth.processIntrospectionResponse(as, client, answer),
        );
        if (!introspected.active)
          throw new ConnectorError('invalid_upstream_token', `${name} does not confirm the access token`);
        const audience = Array.isArray(introspected.aud) ? introspected.aud : [introspected.aud];
        // A token minted for another application must not sign anyone in here.
        if (introspected.client_id !== config.clientId && !audience.includes(config.clientId)) {
          throw new ConnectorError(
            'invalid_upstream_token',
            `the access token was issued to another application of ${name}`,
          );
        }
        if (typeof introspected.sub === 'string') subject = introspected.sub;
      }
      const info = await userinfo(as, accessToken, subject, 'invalid_upstream_token');
      return identityFrom(info, info.sub);
    },
  };
}
