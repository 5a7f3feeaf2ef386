import { OAuthProtocolError } from '../errors.js';
import type { ClientRecord } from '../model.js';
import { constantTimeEqual, hashSecret } from '../secrets.js';

/** Client authentication methods at the token endpoint (RFC 6749 §2.3.1, OIDC Core §9). */
export type ClientAuthMethod = 'client_secret_basic' | 'client_secret_post' | 'none';

/** The credentials as a request presents them: the Authorization header and/or form fields. */
export interface PresentedClientCredentials {
  authorization?: string | undefined;
  clientId?: string | undefined;
  clientSecret?: string | undefined;
}

const CHALLENGE = { 'WWW-Authenticate': 'Basic realm="idgate", charset="UTF-8"' };
// Compared against when the client is unknown, so that an unknown id costs as much as a wrong secret.
const UNKNOWN_CLIENT_HASH = 'x'.repeat(43);

function invalidClient(description = 'client authentication failed'): OAuthProtocolError {
  return new OAuthProtocolError('invalid_client', description, { status: 401, headers: CHALLENGE });
}

// RFC 6749 §2.3.1: id and secret are form-urlencoded before they are joined and base64-encoded.
function formDecode(value: string): string {
  return decodeURIComponent(value.replace(/\+/g, ' '));
}

function parseBasic(header: string): { clientId: string; clientSecret: string } {
  const match = /^Basic[ ]+([A-Za-z0-9+/]+=*)[ ]*$/i.exec(header);
  if (match === null) throw invalidClient('the Authorization header is not valid HTTP Basic');
  try {
    const bytes = Uint8Array.from(atob(match[1] as string), (c) => c.charCodeAt(0));
    const decoded = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    const colon = decoded.indexOf(':');
    if (colon < 1) throw new Error('no colon');
    return {
      clientId: formDecode(decoded.slice(0, colon)),
      clientSecret: formDecode(decoded.slice(colon + 1)),
    };
  } catch {
    throw invalidClient('the Authorization header is not valid HTTP Basic');
  }
}

/**
 * Authenticates the client of a token-endpoint request: HTTP Basic (client_secret_basic), form
 * fields (client_secret_post), or a bare client_id for a public client (none). More than one
 * method in one request is refused (RFC 6749 §2.3). Every failure is the same `invalid_client`
 * with status 401 and a Basic challenge, whether the client is unknown or the secret wrong.
 * After a secret rotation with a grace period, the previous secret is accepted too until its
 * expiry at `now` (the caller's clock; by default the system time).
 * @example const { client, method } = await authenticateClient({ authorization: req.headers.authorization }, findClient, new Date(clock.now()));
 */
export async function authenticateClient(
  presented: PresentedClientCredentials,
  findClient: (clientId: string) => Promise<ClientRecord | undefined>,
  now: Date = new Date(),
): Promise<{ client: ClientRecord; method: ClientAuthMethod }> {
  let clientId: string;
  let secret: string | undefined;
  let method: ClientAuthMethod;
  if (presented.authorization !== undefined && presented.authorization !== '') {
    if (presented.clientSecret !== undefined) {
      throw new OAuthProtocolError('invalid_request', 'use only one client authentication method');
    }
    const basic = parseBasic(presented.authorization);
    if (presented.clientId !== undefined && presented.clientId !== basic.clientId) {
      throw new OAuthProtocolError('invalid_request', 'client_id does not match the authenticated client');
    }
    ({ clientId, clientSecret: secret } = basic);
    method = 'client_secret_basic';
  } else if (presented.clientId !== undefined) {
    clientId = presented.clientId;
    secret = presented.clientSecret;
    method = secret === undefined ? 'none' : 'client_secret_post';
  } else {
    throw invalidClient('client authentication is required');
  }

  const client = await findClient(clientId);
  if (method === 'none') {
    if (client === undefined || !client.public) throw invalidClient();
    return { client, method };
  }
  // Hashed once and compared in constant time with both stored hashes (the previous one or a
  // stand-in), so that a match on either, or on none, costs the same time.
  const presentedHash = await hashSecret(secret as string);
  const matches = constantTimeEqual(presentedHash, client?.secretHash ?? UNKNOWN_CLIENT_HASH);
  const previous = client?.previousSecretHash ?? null;
  const previousLive = previous !== null && (client?.previousSecretExpiresAt?.getTime() ?? 0) > now.getTime();
  const matchesPrevious = constantTimeEqual(presentedHash, previous ?? UNKNOWN_CLIENT_HASH);
  if (client === undefined || client.public || client.secretHash === null) throw invalidClient();
  if (!matches && !(previousLive && matchesPrevious)) throw invalidClient();
  return { client, method };
}
