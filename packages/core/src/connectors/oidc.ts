import type { OidcProviderConfig } from '@idgate/schema';
import { createRemoteJWKSet, customFetch, errors, type JWTPayload, jwtVerify } from 'jose';
import { isRecord, type UpstreamOptions, upstreamDescription, upstreamJson } from './http.js';
import { ConnectorError, type ExternalIdentity, type RedirectConnector } from './types.js';

interface Discovered {
  authorization_endpoint: string;
  token_endpoint: string;
  jwks_uri: string;
  userinfo_endpoint?: string;
  introspection_endpoint?: string;
  token_endpoint_auth_methods_supported?: string[];
  id_token_signing_alg_values_supported?: string[];
}

const ASYMMETRIC = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];

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
 * An upstream OpenID Connect provider: authorization code with PKCE (S256) and nonce; the ID
 * token is verified against the upstream's JWKS (signature with an asymmetric algorithm it
 * advertises, `iss`, `aud`, `azp`, `exp`, `nonce`). A presented upstream access token is trusted
 * only after introspection (when the upstream offers it) says it is active and ours, and the
 * userinfo endpoint answers for it.
 * @example const connector = createOidcConnector(config); const url = await connector.authorizationUrl({ redirectUri, state, nonce, codeChallenge });
 */
export function createOidcConnector(
  config: OidcProviderConfig,
  options: UpstreamOptions = {},
): RedirectConnector {
  const issuer = config.issuer.replace(/\/+$/, '');
  const name = `the identity provider ${config.name}`;
  let discovered: Promise<Discovered> | undefined;
  let jwks: ReturnType<typeof createRemoteJWKSet> | undefined;

  const discover = () => {
    discovered ??= (async () => {
      const { status, body } = await upstreamJson(
        name,
        `${issuer}/.well-known/openid-configuration`,
        { headers: { accept: 'application/json' } },
        options,
      );
      const required = ['authorization_endpoint', 'token_endpoint', 'jwks_uri'] as const;
      if (status !== 200 || !isRecord(body) || required.some((field) => typeof body[field] !== 'string')) {
        throw new ConnectorError('invalid_upstream_response', `${name} has no usable discovery document`);
      }
      // OIDC Discovery §4.3: the document must name the issuer it was fetched for.
      if (String(body.issuer).replace(/\/+$/, '') !== issuer) {
        throw new ConnectorError('invalid_upstream_response', `${name} announces another issuer`);
      }
      return body as unknown as Discovered;
    })();
    // A failed discovery is retried next time rather than cached.
    discovered.catch(() => {
      discovered = undefined;
    });
    return discovered;
  };

  const clientAuth = (
    metadata: Discovered,
  ): { headers: Record<string, string>; fields: Record<string, string> } => {
    const methods = metadata.token_endpoint_auth_methods_supported ?? ['client_secret_basic'];
    if (!methods.includes('client_secret_basic') && methods.includes('client_secret_post')) {
      return { headers: {}, fields: { client_id: config.clientId, client_secret: config.clientSecret } };
    }
    const encode = (value: string) => encodeURIComponent(value).replace(/%20/g, '+');
    return {
      headers: {
        authorization: `Basic ${btoa(`${encode(config.clientId)}:${encode(config.clientSecret)}`)}`,
      },
      fields: {},
    };
  };

  const identityFrom = (claims: Record<string, unknown>, subject: string): ExternalIdentity => ({
    subject,
    username: claimString(claims, config.claims.username) ?? subject,
    email: claimString(claims, config.claims.email),
    emailVerified: claims.email_verified === true,
    displayName: claimString(claims, config.claims.name),
    groups: claimGroups(claims, config.claims.groups),
  });

  const userinfo = async (
    metadata: Discovered,
    accessToken: string,
    failure: 'invalid_upstream_token' | 'upstream_error',
  ) => {
    if (metadata.userinfo_endpoint === undefined) {
      throw new ConnectorError(failure, `${name} has no userinfo endpoint to confirm the token`);
    }
    const { status, body } = await upstreamJson(
      name,
      metadata.userinfo_endpoint,
      { headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json' } },
      options,
    );
    if (status === 401 || status === 403)
      throw new ConnectorError(failure, `${name} did not accept the access token`);
    if (status !== 200 || !isRecord(body) || typeof body.sub !== 'string') {
      throw new ConnectorError(
        'invalid_upstream_response',
        `${name} answered userinfo with something unusable`,
      );
    }
    return body;
  };

  return {
    kind: 'redirect',

    async authorizationUrl({ redirectUri, state, nonce, codeChallenge }) {
      const url = new URL((await discover()).authorization_endpoint);
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

    async exchangeCode({ code, redirectUri, codeVerifier, nonce }) {
      const metadata = await discover();
      const auth = clientAuth(metadata);
      const form = new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: redirectUri,
        code_verifier: codeVerifier,
        ...auth.fields,
      });
      const { status, body } = await upstreamJson(
        name,
        metadata.token_endpoint,
        {
          method: 'POST',
          headers: {
            'content-type': 'application/x-www-form-urlencoded',
            accept: 'application/json',
            ...auth.headers,
          },
          body: form.toString(),
        },
        options,
      );
      if (status !== 200)
        throw new ConnectorError('upstream_error', `${name} refused the sign-in${upstreamDescription(body)}`);
      if (!isRecord(body) || typeof body.id_token !== 'string' || typeof body.access_token !== 'string') {
        throw new ConnectorError('invalid_upstream_response', `${name} answered without an ID token`);
      }
      jwks ??= createRemoteJWKSet(new URL(metadata.jwks_uri), {
        [customFetch]: options.fetch ?? globalThis.fetch,
        timeoutDuration: options.timeoutMs ?? 10_000,
      });
      const algorithms = (metadata.id_token_signing_alg_values_supported ?? ['RS256']).filter((alg) =>
        ASYMMETRIC.includes(alg),
      );
      let claims: JWTPayload;
      try {
        ({ payload: claims } = await jwtVerify(body.id_token, jwks, {
          issuer: [issuer, `${issuer}/`],
          audience: config.clientId,
          algorithms,
        }));
      } catch (cause) {
        if (cause instanceof errors.JWKSTimeout)
          throw new ConnectorError('upstream_unavailable', `${name} did not answer`, { cause });
        throw new ConnectorError(
          'invalid_upstream_response',
          `${name} sent an ID token that does not verify`,
          { cause },
        );
      }
      // OIDC Core §3.1.3.7: with several audiences, azp must be us.
      if (Array.isArray(claims.aud) && claims.aud.length > 1 && claims.azp !== config.clientId) {
        throw new ConnectorError(
          'invalid_upstream_response',
          `${name} sent an ID token meant for another client`,
        );
      }
      if (claims.nonce !== nonce)
        throw new ConnectorError(
          'invalid_upstream_response',
          `${name} sent an ID token for another sign-in (nonce)`,
        );
      if (typeof claims.sub !== 'string' || claims.sub === '')
        throw new ConnectorError('invalid_upstream_response', `${name} sent an ID token without a subject`);
      let merged: Record<string, unknown> = claims;
      if (config.useUserinfo) {
        const info = await userinfo(metadata, body.access_token, 'upstream_error');
        // OIDC Core §5.3.2: userinfo about someone else must be refused.
        if (info.sub !== claims.sub)
          throw new ConnectorError(
            'invalid_upstream_response',
            `${name} answered userinfo for another subject`,
          );
        merged = { ...claims, ...info };
      }
      return identityFrom(merged, claims.sub);
    },

    async identityFromAccessToken({ accessToken, tokenType }) {
      if (tokenType.toLowerCase() !== 'bearer')
        throw new ConnectorError('invalid_upstream_token', `only Bearer tokens of ${name} are accepted`);
      const metadata = await discover();
      if (metadata.introspection_endpoint !== undefined) {
        const auth = clientAuth(metadata);
        const { status, body } = await upstreamJson(
          name,
          metadata.introspection_endpoint,
          {
            method: 'POST',
            headers: {
              'content-type': 'application/x-www-form-urlencoded',
              accept: 'application/json',
              ...auth.headers,
            },
            body: new URLSearchParams({
              token: accessToken,
              token_type_hint: 'access_token',
              ...auth.fields,
            }).toString(),
          },
          options,
        );
        if (status !== 200 || !isRecord(body) || body.active !== true) {
          throw new ConnectorError('invalid_upstream_token', `${name} does not confirm the access token`);
        }
        const audience = Array.isArray(body.aud) ? body.aud : [body.aud];
        // A token minted for another application must not sign anyone in here.
        if (body.client_id !== config.clientId && !audience.includes(config.clientId)) {
          throw new ConnectorError(
            'invalid_upstream_token',
            `the access token was issued to another application of ${name}`,
          );
        }
      }
      const info = await userinfo(metadata, accessToken, 'invalid_upstream_token');
      return identityFrom(info, info.sub as string);
    },
  };
}
