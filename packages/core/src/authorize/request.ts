import {
  AuthorizationRequestForm,
  type FormField,
  FormReader,
  type FormValues,
  type OAuthErrorCode,
} from '@idgate/schema';
import { OAuthProtocolError } from '../errors.js';
import type { ClientRecord, CodeChallengeMethod } from '../model.js';
import { approvedResources, grantedScope, parseScope, tokenAudience } from '../scopes.js';

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
  /** OIDC Core §3.1.2.1 `acr_values`, in order of preference; absent when not asked. */
  acrValues?: string[];
  /**
   * RFC 8707 resource indicators: the audiences the grant of this request will cover, as the
   * consent page names them — those the request named, or all the client's audiences when it named
   * none; absent for a client without audiences.
   */
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

/** The parameters of OIDC Core §6 that idgate refuses, with the error each one gets. */
const REQUEST_OBJECTS = [
  ['request', 'request_not_supported', 'request objects are not supported'],
  ['request_uri', 'request_uri_not_supported', 'request_uri is not supported'],
] as const;

/**
 * Validates an authorization request as a list of named checks, in the order that decides where
 * an error may go: client, then redirect_uri (errors shown to the user), then everything else
 * (errors sent back to the client). Each parameter is read with its entry in
 * {@link AuthorizationRequestForm}, the schema the endpoint's description shows.
 * @example const request = await validateAuthorizationRequest(query, { findClient });
 */
export async function validateAuthorizationRequest(
  params: FormValues,
  options: AuthorizationRequestOptions,
): Promise<{ request: AuthorizationRequest; client: ClientRecord }> {
  const form = new FormReader(AuthorizationRequestForm, params, { blankIsAbsent: true });
  const page = (description: string): never => {
    throw new AuthorizationError('invalid_request', description);
  };
  const clientId = valueOr(form.field('client_id'), page);
  const client = await options.findClient(clientId);
  if (client === undefined) throw new AuthorizationError('invalid_client', 'the client is not known');

  const redirectUri = checkRedirectUri(valueOr(form.field('redirect_uri'), page), client);
  // A repeated state cannot go back to the client; one that is too long goes back as it came.
  const stateField = form.field('state');
  if (!stateField.ok && stateField.problem === 'repeated') page(stateField.description);
  const state = stateField.ok ? stateField.value : (stateField.sent as string);
  const back = (code: OAuthErrorCode, description: string): never => {
    throw new AuthorizationError(code, description, redirectUri, state);
  };
  const invalid = (description: string) => back('invalid_request', description);
  if (!stateField.ok) invalid(stateField.description);

  // OIDC Core §6: request objects are not supported, and say so with errors of their own.
  for (const [name, code, description] of REQUEST_OBJECTS) {
    const sent = params[name];
    if (Array.isArray(sent)) invalid(`parameter ${name} must not be repeated`);
    if (sent !== undefined && sent !== '') back(code, description);
  }
  const responseType = form.field('response_type');
  if (!responseType.ok)
    back(
      responseType.problem === 'invalid' ? 'unsupported_response_type' : 'invalid_request',
      responseType.description,
    );
  valueOr(form.field('response_mode'), invalid);
  if (!client.grantTypes.includes('authorization_code')) {
    back('unauthorized_client', 'this client may not use the authorization code flow');
  }

  const requestedScope = valueOr(form.field('scope'), invalid);
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
    prompt: checkPrompt(valueOr(form.field('prompt'), invalid), back),
  };
  if (state !== undefined) request.state = state;
  const nonce = valueOr(form.field('nonce'), invalid);
  if (nonce !== undefined) request.nonce = nonce;
  const maxAge = valueOr(form.field('max_age'), invalid);
  if (maxAge !== undefined) request.maxAge = Number(maxAge);
  const loginHint = valueOr(form.field('login_hint'), invalid);
  if (loginHint !== undefined && loginHint.length <= 256) request.loginHint = loginHint;
  const acrValues = valueOr(form.field('acr_values'), invalid);
  if (acrValues !== undefined) {
    const values = acrValues
      .split(' ')
      .filter((v) => v !== '')
      .slice(0, 16);
    if (values.length > 0) request.acrValues = values;
  }
  const resource =
    checkResource(valueOr(form.field('resource'), invalid), client, back) ??
    approvedResources(undefined, client) ??
    undefined;
  if (resource !== undefined) request.resource = resource;
  checkPkce(form, client, options, request, back);
  return { request, client };
}

/** The field's value, or what `fail` throws with the field's problem. */
function valueOr<T>(field: FormField<T>, fail: (description: string) => never): T {
  return field.ok ? field.value : fail(field.description);
}

// RFC 6749 §3.1.2.3 and RFC 9700 §4.1.3: the redirect_uri must equal a registered one exactly,
// except for the port of a public client's loopback IP literal (RFC 8252 §7.3).
function checkRedirectUri(redirectUri: string, client: ClientRecord): string {
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
  form: FormReader<(typeof AuthorizationRequestForm)['shape']>,
  client: ClientRecord,
  options: AuthorizationRequestOptions,
  request: AuthorizationRequest,
  back: (e: 'invalid_request', d: string) => never,
): void {
  const invalid = (description: string) => back('invalid_request', description);
  const challenge = form.field('code_challenge');
  const method = form.field('code_challenge_method');
  for (const field of [challenge, method])
    if (!field.ok && field.problem === 'repeated') invalid(field.description);
  if (form.sent('code_challenge') === undefined) {
    if (form.sent('code_challenge_method') !== undefined)
      invalid('code_challenge_method without code_challenge');
    if (client.public || options.requirePkce)
      invalid('PKCE is required: send code_challenge with code_challenge_method=S256');
    return;
  }
  const chosen = valueOr(method, invalid) ?? 'plain';
  if (chosen === 'plain' && !options.allowPlainPkce) invalid('code_challenge_method must be S256');
  // Sent, so a string once the schema takes it.
  request.codeChallenge = valueOr(challenge, invalid) as string;
  request.codeChallengeMethod = chosen;
}
