import { FormReader, type FormValues, LogoutRequestForm } from '@idgate/schema';
import { OAuthProtocolError } from '../errors.js';
import type { KeyRing } from '../keys/key-ring.js';
import type { ClientRecord } from '../model.js';
import { issuedBefore } from '../tokens/access-token-check.js';
import { verifyCompactJws } from '../tokens/jws.js';

/** A validated RP-initiated logout request (OIDC RP-Initiated Logout 1.0 §2). */
export interface LogoutRequest {
  /** The client that asked, from `id_token_hint` or `client_id`. */
  clientId?: string;
  /** The user the hint names. */
  subject?: string;
  /** Where to send the browser afterwards, `state` included; only a registered URI. */
  redirectTo?: string;
  /** Whether the request proved it comes from the client (a valid `id_token_hint`). */
  hinted: boolean;
}

/** What validating a logout request reads. */
export interface LogoutContext {
  issuer: string;
  keys: KeyRing;
  findClient(clientId: string): Promise<ClientRecord | undefined>;
  /** The latest not-before of a client's tokens for a user: a hint issued before it is refused. */
  notBefore?: (clientId: string, userId: string | null) => Promise<Date | undefined>;
}

const fail = (description: string) => new OAuthProtocolError('invalid_request', description);

async function readHint(
  hint: string,
  issuer: string,
  keys: KeyRing,
  notBefore: LogoutContext['notBefore'],
): Promise<{ sub: string; clientId: string }> {
  try {
    // The hint may have expired (§2): only its signature and issuer matter.
    const checked = await verifyCompactJws(keys, hint);
    if (!checked.ok) throw new Error(checked.reason);
    const claims = checked.payload;
    const aud = Array.isArray(claims.aud) ? claims.aud[0] : claims.aud;
    const clientId = typeof claims.azp === 'string' ? claims.azp : aud;
    if (claims.iss !== issuer || typeof claims.sub !== 'string' || typeof clientId !== 'string')
      throw new Error('claims');
    // An ID token issued before a not-before is revoked: it proves nothing any more.
    if (typeof claims.iat !== 'number' || issuedBefore(claims.iat, await notBefore?.(clientId, claims.sub)))
      throw new Error('revoked');
    return { sub: claims.sub, clientId };
  } catch {
    throw fail('id_token_hint is not a valid ID token of this server');
  }
}

/**
 * Validates a logout request, its parameters read with {@link LogoutRequestForm}: `id_token_hint`
 * (signature and issuer; expiry does not matter), `client_id` consistent with it, and
 * `post_logout_redirect_uri` only when registered for that client, exactly. `state` is carried
 * to the redirect.
 * @example const logout = await validateLogoutRequest(query, { issuer, keys, findClient });
 */
export async function validateLogoutRequest(
  params: FormValues,
  context: LogoutContext,
): Promise<LogoutRequest> {
  const form = new FormReader(LogoutRequestForm, params, { blankIsAbsent: true });
  const value = (name: keyof LogoutRequestForm) => {
    const field = form.field(name);
    if (!field.ok) throw fail(field.description);
    return field.value;
  };
  const hint = value('id_token_hint');
  const clientIdParam = value('client_id');
  const redirect = value('post_logout_redirect_uri');
  const state = value('state');
  const result: LogoutRequest = { hinted: false };
  if (hint !== undefined) {
    const { sub, clientId } = await readHint(hint, context.issuer, context.keys, context.notBefore);
    if (clientIdParam !== undefined && clientIdParam !== clientId)
      throw fail('client_id does not match id_token_hint');
    Object.assign(result, { subject: sub, clientId, hinted: true });
  } else if (clientIdParam !== undefined) {
    result.clientId = clientIdParam;
  }
  if (redirect !== undefined) {
    if (result.clientId === undefined)
      throw fail('post_logout_redirect_uri needs id_token_hint or client_id');
    const client = await context.findClient(result.clientId);
    if (client === undefined || !client.postLogoutRedirectUris.includes(redirect)) {
      throw fail('post_logout_redirect_uri is not registered for this client');
    }
    const url = new URL(redirect);
    if (state !== undefined) url.searchParams.set('state', state);
    result.redirectTo = url.toString();
  }
  return result;
}
