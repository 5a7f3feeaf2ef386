import type { OAuthErrorCode } from '@idgate/schema';
import { OAuthProtocolError } from '../errors.js';
import type { ClientRecord, CodeChallengeMethod } from '../model.js';
import { grantedScope, parseScope, tokenAudience } from '../scopes.js';
import { isPkceValue } from './pkce.js';

/** `prompt` values of OIDC Core §3.1.2.1 that idgate honours. */
export type Prompt = 'none' | 'login' | 'consent' | 'select_account';
const PROMPTS: readonly Prompt[] = ['none', 'login', 'consent', 'select_account'];

/** A validated authorization request (RFC 6749 §4.1.1, OIDC Core §3.1.2.1, RFC 7636 §4.3). */
export interface AuthorizationRequest {
  clientId: string;
  redirectUri: string;
  scope: string[];
  state?: string;
  nonce?: string;
  codeChallenge?: string;
  codeChallengeMethod?: CodeChallengeMethod;
  prompt: Prompt[];
  /** Seconds; the user must have authenticated at most this long ago. */
  maxAge?: number;
  loginHint?: string;
  /** RFC 8707 resource indicators: the audiences the tokens of this request may be for. */
  resource?: string[];
}

/**
 * An error of the authorization endpoint. Before the client and its redirect_uri are validated it
 * is shown to the user (`redirectUri` undefined): RFC 6749 §4.1.2.1 forbids redirecting to an
 * unvalidated URI. After, it travels back to the client with `state` and `iss`.
 */
export class AuthorizationError extends OAuthProtocolError {
  override readonly name: string = 'AuthorizationError';

  constructor(
    code: OAuthErrorCode,
    description: string,
    readonly redirectUri?: string,
    readonly state?: string,
  ) {
    super(code, description, { redirectable: redirectUri !== undefined });
  }
}

/** What validating needs. */
export interface AuthorizationRequestOptions {
  findClient(clientId: string): Promise<ClientRecord | undefined>;
  /** Accept `code_challenge_method=plain` (default false: RFC 9700 §2.1.1 recommends S256 only). */
  allowPlainPkce?: boolean;
  /** Require PKCE from confidential clients too (default false: required for public clients). */
  requirePkce?: boolean;
}

type Params = Record<string, string | string[] | undefined>;

function single(params: Params, name: string, fail: (description: string) => never): string | undefined {
  const value = params[name];
  if (Array.isArray(value)) fail(`parameter ${name} must not be repeated`);
  return value === '' ? undefined : (value as string | undefined);
}

/**
 * Validates an authorization request as a list of named checks, in the order that decides where
 * an error may go: client, then redirect_uri (errors shown to the user), then everything else
 * (errors sent back to the client).
 * @example const request = await validateAuthorizationRequest(query, { findClient });
 */
export async function validateAuthorizationRequest(
  params: Params,
  options: AuthorizationRequestOptions,
): Promise<{ request: AuthorizationRequest; client: ClientRecord }> {
  const page = (description: string): never => {
    throw new AuthorizationError('invalid_request', description);
  };
  const clientId = single(params, 'client_id', page);
  if (clientId === undefined) page('client_id is required');
  const client = await options.findClient(clientId as string);
  if (client === undefined) throw new AuthorizationError('invalid_client', 'the client is not known');

  const redirectUri = checkRedirectUri(single(params, 'redirect_uri', page), client);
  const state = single(params, 'state', page);
  const back = (code: OAuthErrorCode, description: string): never => {
    throw new AuthorizationError(code, description, redirectUri, state);
  };
  const value = (name: string) => single(params, name, (d) => back('invalid_request', d));

  if (state !== undefined && state.length > 2048) back('invalid_request', 'state is too long');
  if (value('request') !== undefined) back('request_not_supported', 'request objects are not supported');
  if (value('request_uri') !== undefined) back('request_uri_not_supported', 'request_uri is not supported');
  const responseType = value('response_type');
  if (responseType === undefined) back('invalid_request', 'response_type is required');
  if (responseType !== 'code') back('unsupported_response_type', 'only response_type=code is supported');
  const responseMode = value('response_mode');
  if (responseMode !== undefined && responseMode !== 'query')
    back('invalid_request', 'only response_mode=query is supported');
  if (!client.grantTypes.includes('authorization_code')) {
    back('unauthorized_client', 'this client may not use the authorization code flow');
  }

  const requestedScope = value('scope');
  let scope: string[] = [];
  try {
    scope = grantedScope(parseScope(requestedScope), client.scopes);
  } catch (error) {
    back('invalid_scope', (error as OAuthProtocolError).description);
  }

  const request: AuthorizationRequest = {
    clientId: client.clientId,
    redirectUri,
    scope,
    prompt: checkPrompt(value('prompt'), back),
  };
  if (state !== undefined) request.state = state;
  const nonce = value('nonce');
  if (nonce !== undefined) {
    if (nonce.length > 512) back('invalid_request', 'nonce is too long');
    request.nonce = nonce;
  }
  const maxAge = value('max_age');
  if (maxAge !== undefined) {
    if (!/^\d{1,9}$/.test(maxAge)) back('invalid_request', 'max_age must be a non-negative integer');
    request.maxAge = Number(maxAge);
  }
  const loginHint = value('login_hint');
  if (loginHint !== undefined && loginHint.length <= 256) request.loginHint = loginHint;
  const resource = checkResource(params.resource, client, back);
  if (resource !== undefined) request.resource = resource;
  checkPkce(value('code_challenge'), value('code_challenge_method'), client, options, request, back);
  return { request, client };
}

// RFC 6749 §3.1.2.3 and RFC 9700 §4.1.3: the redirect_uri must equal a registered one exactly,
// except for the port of a public client's loopback IP literal (RFC 8252 §7.3).
function checkRedirectUri(redirectUri: string | undefined, client: ClientRecord): string {
  if (redirectUri === undefined) {
    throw new AuthorizationError('invalid_request', 'redirect_uri is required');
  }
  if (!client.redirectUris.includes(redirectUri) && !matchesLoopbackRedirect(redirectUri, client)) {
    throw new AuthorizationError('invalid_request', 'redirect_uri is not registered for this client');
  }
  return redirectUri;
}

// Scheme and IP literal host, an optional port, then the path and query (no fragment, no userinfo).
const LOOPBACK_REDIRECT = /^http:\/\/(127\.0\.0\.1|\[::1\])(?::(\d{1,5}))?([/?][^#]*)?$/;

/** The loopback redirect URI without its port, or undefined for any other URI. */
function portless(uri: string): string | undefined {
  const match = LOOPBACK_REDIRECT.exec(uri);
  if (match === null) return undefined;
  const port = match[2];
  if (port !== undefined && (Number(port) < 1 || Number(port) > 65535)) return undefined;
  return `http://${match[1]}${match[3] ?? ''}`;
}

/**
 * RFC 8252 §7.3: a native app listens on a port the OS picks, so for a public client a loopback
 * redirect URI with an IP literal (`http://127.0.0.1/…`, `http://[::1]/…`) matches at any port,
 * with scheme, host, path and query compared exactly. Not `localhost` (§8.3: it may resolve
 * elsewhere), not https, not for confidential clients.
 * @example matchesLoopbackRedirect('http://127.0.0.1:53124/callback', client) // true when http://127.0.0.1/callback is registered
 */
export function matchesLoopbackRedirect(redirectUri: string, client: ClientRecord): boolean {
  if (!client.public) return false;
  const presented = portless(redirectUri);
  if (presented === undefined) return false;
  return client.redirectUris.some((registered) => portless(registered) === presented);
}

// RFC 8707 §2: one or more absolute URIs, each of which the client may ask for.
function checkResource(
  raw: string | string[] | undefined,
  client: ClientRecord,
  back: (e: 'invalid_target', d: string) => never,
): string[] | undefined {
  if (raw === undefined) return undefined;
  const values = (Array.isArray(raw) ? raw : [raw]).filter((value) => value !== '');
  if (values.length === 0) return undefined;
  try {
    return tokenAudience(values, client);
  } catch (error) {
    return back('invalid_target', (error as OAuthProtocolError).description);
  }
}

function checkPrompt(value: string | undefined, back: (e: 'invalid_request', d: string) => never): Prompt[] {
  if (value === undefined) return [];
  const prompts = [...new Set(value.split(' ').filter((p) => p !== ''))];
  for (const prompt of prompts) {
    if (!PROMPTS.includes(prompt as Prompt))
      back('invalid_request', `prompt ${prompt.slice(0, 32)} is not supported`);
  }
  // OIDC Core §3.1.2.1: none with any other value is an error.
  if (prompts.includes('none') && prompts.length > 1)
    back('invalid_request', 'prompt=none cannot be combined with other values');
  return prompts as Prompt[];
}

function checkPkce(
  challenge: string | undefined,
  method: string | undefined,
  client: ClientRecord,
  options: AuthorizationRequestOptions,
  request: AuthorizationRequest,
  back: (e: 'invalid_request', d: string) => never,
): void {
  if (challenge === undefined) {
    if (method !== undefined) back('invalid_request', 'code_challenge_method without code_challenge');
    if (client.public || options.requirePkce)
      back('invalid_request', 'PKCE is required: send code_challenge with code_challenge_method=S256');
    return;
  }
  const chosen = method ?? 'plain';
  if (chosen !== 'S256' && chosen !== 'plain') back('invalid_request', 'code_challenge_method must be S256');
  if (chosen === 'plain' && !options.allowPlainPkce)
    back('invalid_request', 'code_challenge_method must be S256');
  if (!isPkceValue(challenge))
    back('invalid_request', 'code_challenge must be 43 to 128 characters of [A-Za-z0-9._~-]');
  request.codeChallenge = challenge;
  request.codeChallengeMethod = chosen as CodeChallengeMethod;
}
