import { base64UrlEncode } from './encoding.js';
import { IdgateAuthorizationError, IdgateSdkError } from './errors.js';
import type {
  AuthorizationRequest,
  AuthorizationRequestOptions,
  AuthorizationRequestParameters,
  AuthorizationResponse,
  ExpectedAuthorizationResponse,
} from './types.js';
import { checkedIssuer, issuerOfRoot, serverRoot } from './urls.js';

/** RFC 7636 §4.1: `code_verifier = 43*128unreserved`. */
const PKCE_VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;
/** Random bytes behind a verifier, a state and a nonce: 256 bits, 43 base64url characters. */
const RANDOM_BYTES = 32;

/** The Web Crypto API, or an error saying why there is none. */
function webCrypto(): Crypto {
  const crypto = globalThis.crypto as Crypto | undefined;
  if (crypto?.subtle === undefined || typeof crypto.getRandomValues !== 'function') {
    throw new IdgateSdkError(
      'the Web Crypto API (crypto.subtle) is not available; browsers offer it only in secure contexts (https or localhost)',
    );
  }
  return crypto;
}

/** `byteLength` cryptographically random bytes, base64url-encoded. */
function randomString(byteLength: number): string {
  return base64UrlEncode(webCrypto().getRandomValues(new Uint8Array(byteLength)));
}

/**
 * A fresh PKCE `code_verifier` (RFC 7636 §4.1): 32 random bytes from `crypto.getRandomValues`,
 * base64url-encoded, i.e. 43 characters of `[A-Za-z0-9_-]`. {@link createAuthorizationRequest}
 * makes one for you.
 * @throws {IdgateSdkError} when the runtime has no Web Crypto API.
 * @example
 * const verifier = generateCodeVerifier(); // e.g. 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk'
 */
export function generateCodeVerifier(): string {
  return randomString(RANDOM_BYTES);
}

/**
 * The S256 `code_challenge` of a PKCE `code_verifier` (RFC 7636 §4.2):
 * `BASE64URL(SHA-256(ASCII(code_verifier)))`, with Web Crypto.
 * @throws {IdgateSdkError} when `verifier` is not 43 to 128 characters of `[A-Za-z0-9-._~]` (RFC 7636 §4.1),
 * or the runtime has no Web Crypto API.
 * @example
 * await computeCodeChallenge('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk');
 * // 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM' (RFC 7636 Appendix B)
 */
export async function computeCodeChallenge(verifier: string): Promise<string> {
  if (typeof verifier !== 'string' || !PKCE_VERIFIER.test(verifier)) {
    throw new IdgateSdkError(
      'a PKCE code_verifier must be 43 to 128 characters of [A-Za-z0-9-._~] (RFC 7636 §4.1)',
    );
  }
  const digest = await webCrypto().subtle.digest('SHA-256', new TextEncoder().encode(verifier));
  return base64UrlEncode(new Uint8Array(digest));
}

/**
 * Prepares an OpenID Connect authorization code request with PKCE (RFC 6749 §4.1.1, RFC 7636,
 * OIDC Core §3.1.2.1): generates the `code_verifier` and its S256 challenge, a random `state`
 * and, when the scope includes `openid`, a random `nonce`, and builds the URL of
 * `{issuer}/authorize`. Needs no client and no network: usable in a browser or a server.
 * @throws {IdgateSdkError} for an invalid argument (no or both of `baseUrl`/`issuer`, a relative
 * `redirectUri`, a negative `maxAge`, `prompt` `none` with other values...), or when the runtime
 * has no Web Crypto API.
 * @example
 * import { createAuthorizationRequest } from '@idgate/sdk';
 *
 * const { url, codeVerifier, state, nonce } = await createAuthorizationRequest({
 *   issuer: 'https://id.example.com/oauth',
 *   clientId: 'app',
 *   redirectUri: 'https://app.example.com/callback',
 *   scope: 'openid groups',
 * });
 * session.set({ codeVerifier, state, nonce }); // until the callback
 * response.redirect(url.href);
 */
export async function createAuthorizationRequest(
  options: AuthorizationRequestOptions,
): Promise<AuthorizationRequest> {
  const { baseUrl, issuer } = options;
  if ((baseUrl === undefined) === (issuer === undefined)) {
    throw new IdgateSdkError('pass either baseUrl (the server root) or issuer, not both and not neither');
  }
  const issuerId = issuer === undefined ? issuerOfRoot(serverRoot(baseUrl as string | URL)) : issuer;
  return buildAuthorizationRequest(issuerId, options);
}

/** The work of {@link createAuthorizationRequest} once the issuer is known. */
export async function buildAuthorizationRequest(
  issuer: string | URL,
  parameters: AuthorizationRequestParameters,
): Promise<AuthorizationRequest> {
  const url = new URL(`${checkedIssuer(issuer)}/authorize`);
  const { clientId, redirectUri, maxAge, loginHint } = parameters;
  if (typeof clientId !== 'string' || clientId === '') throw new IdgateSdkError('clientId must not be empty');
  checkRedirectUri(redirectUri);
  const scopes = (parameters.scope ?? 'openid').split(/[ \t\r\n]+/).filter((scope) => scope !== '');
  if (scopes.length === 0) throw new IdgateSdkError('scope must name at least one scope (default: openid)');
  const state = parameters.state ?? randomString(RANDOM_BYTES);
  if (state === '') throw new IdgateSdkError('state must not be empty');
  const nonce = parameters.nonce ?? (scopes.includes('openid') ? randomString(RANDOM_BYTES) : undefined);
  if (nonce === '') throw new IdgateSdkError('nonce must not be empty');
  const prompts = parameters.prompt === undefined ? [] : [parameters.prompt].flat();
  if (prompts.includes('none') && prompts.length > 1) {
    throw new IdgateSdkError(
      'prompt "none" cannot be combined with other prompt values (OIDC Core §3.1.2.1)',
    );
  }
  if (maxAge !== undefined && !(Number.isSafeInteger(maxAge) && maxAge >= 0)) {
    throw new IdgateSdkError('maxAge must be a non-negative integer number of seconds');
  }
  const codeVerifier = generateCodeVerifier();
  const codeChallenge = await computeCodeChallenge(codeVerifier);

  const query = url.searchParams;
  query.set('response_type', 'code');
  query.set('client_id', clientId);
  query.set('redirect_uri', redirectUri);
  query.set('scope', scopes.join(' '));
  query.set('state', state);
  if (nonce !== undefined) query.set('nonce', nonce);
  query.set('code_challenge', codeChallenge);
  query.set('code_challenge_method', 'S256');
  if (prompts.length > 0) query.set('prompt', prompts.join(' '));
  if (maxAge !== undefined) query.set('max_age', String(maxAge));
  if (loginHint !== undefined && loginHint !== '') query.set('login_hint', loginHint);
  const acrValues = acrValuesParameter(parameters.acrValues);
  if (acrValues !== undefined) query.set('acr_values', acrValues);
  return nonce === undefined ? { url, codeVerifier, state } : { url, codeVerifier, state, nonce };
}

/** `acr_values` as sent: the values space-separated, undefined when there are none. */
export function acrValuesParameter(acrValues: string | readonly string[] | undefined): string | undefined {
  const values = [acrValues ?? []]
    .flat()
    .flatMap((value) => value.split(' '))
    .filter((value) => value !== '');
  return values.length === 0 ? undefined : values.join(' ');
}

/** RFC 6749 §3.1.2: the redirection endpoint URI must be absolute and carry no fragment. */
function checkRedirectUri(redirectUri: string): void {
  let url: URL;
  try {
    url = new URL(redirectUri);
  } catch (error) {
    throw new IdgateSdkError('redirectUri must be an absolute URI', { cause: error });
  }
  if (url.hash !== '' || redirectUri.includes('#')) {
    throw new IdgateSdkError('redirectUri must not have a fragment (RFC 6749 §3.1.2)');
  }
}

/**
 * Checks the authorization response the user agent brought back to the redirect URI
 * (RFC 6749 §4.1.2) and returns its `code`. In this order:
 * 1. when `expected.issuer` is given, the `iss` parameter (RFC 9207) must be present and equal it
 *    (mix-up defence; idgate always sends `iss`);
 * 2. `state` must equal the state of the request (CSRF defence), for errors too;
 * 3. an `error` response throws {@link IdgateAuthorizationError};
 * 4. there must be a `code`.
 * A parameter given twice is rejected (RFC 6749 §3.1). Only the query is read (`response_mode=query`).
 * @param callbackUrl the full callback URL, or just its path and query (e.g. Node's `request.url`).
 * @throws {IdgateAuthorizationError} for an error response whose state (and issuer) matched.
 * @throws {IdgateSdkError} for an issuer or state mismatch, a missing code, a repeated parameter.
 * @example
 * import { parseAuthorizationResponse } from '@idgate/sdk';
 *
 * const { code } = parseAuthorizationResponse(request.url, {
 *   state: session.state,
 *   issuer: 'https://id.example.com/oauth',
 * });
 * const tokens = await client.exchangeCode({ code, redirectUri, codeVerifier: session.codeVerifier, clientId: 'app' });
 */
export function parseAuthorizationResponse(
  callbackUrl: string | URL,
  expected: ExpectedAuthorizationResponse,
): AuthorizationResponse {
  if (typeof expected?.state !== 'string' || expected.state === '') {
    throw new IdgateSdkError('expected.state must be the (non-empty) state of the authorization request');
  }
  let query: URLSearchParams;
  try {
    query = new URL(callbackUrl, 'http://callback.invalid/').searchParams;
  } catch (error) {
    throw new IdgateSdkError('callbackUrl is not a URL', { cause: error });
  }
  const single = (name: string): string | undefined => {
    const values = query.getAll(name);
    if (values.length > 1) {
      throw new IdgateSdkError(`the authorization response repeats the ${name} parameter (RFC 6749 §3.1)`);
    }
    return values[0];
  };

  const iss = single('iss');
  if (expected.issuer !== undefined) {
    if (iss === undefined) {
      // idgate advertises authorization_response_iss_parameter_supported: RFC 9207 §2.4 says reject
      throw new IdgateSdkError(
        'the authorization response carries no iss, though an issuer is expected (RFC 9207)',
      );
    }
    if (iss !== expected.issuer) {
      throw new IdgateSdkError(
        `the authorization response comes from issuer ${quote(iss)}, not ${quote(expected.issuer)} (RFC 9207): ` +
          'it may be a mix-up attack',
      );
    }
  }
  const state = single('state');
  if (state === undefined) {
    throw new IdgateSdkError('the authorization response carries no state: it may be forged (CSRF)');
  }
  if (state !== expected.state) {
    throw new IdgateSdkError(
      'the state of the authorization response differs from the state of the request: it may be forged (CSRF)',
    );
  }
  const error = single('error');
  if (error !== undefined && error !== '') {
    const errorDescription = single('error_description');
    throw new IdgateAuthorizationError(
      `authorization failed: ${error}${errorDescription ? ` (${errorDescription})` : ''}`,
      { error, errorDescription, errorUri: single('error_uri'), state },
    );
  }
  const code = single('code');
  if (code === undefined || code === '') {
    throw new IdgateSdkError('the authorization response carries neither a code nor an error');
  }
  return { code };
}

/** A value of the (untrusted) response, quoted and shortened for a message. */
function quote(value: string): string {
  return JSON.stringify(value.length > 200 ? `${value.slice(0, 200)}…` : value);
}
