/**
 * Encodes a value with the `application/x-www-form-urlencoded` serializer (RFC 6749 Appendix B):
 * UTF-8, then every byte other than `A–Z a–z 0–9 * - . _` percent-encoded, space as `+`.
 * This is exactly what `URLSearchParams` produces for a request body.
 * @example formUrlEncode(' %&+£€') // '+%25%26%2B%C2%A3%E2%82%AC'
 */
export function formUrlEncode(value: string): string {
  return new URLSearchParams([['v', value]]).toString().slice('v='.length);
}

/**
 * Standard base64 (RFC 4648 §4, with padding) of the UTF-8 bytes of `text`, without Buffer.
 * @example base64Utf8('a:b') // 'YTpi'
 */
export function base64Utf8(text: string): string {
  const bytes = new TextEncoder().encode(text);
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/**
 * The `Authorization` header value of `client_secret_basic` (RFC 6749 §2.3.1): client id and
 * secret are each form-urlencoded, joined with `:`, and base64-encoded.
 * @example basicAuthorization('my client', 's:cret') // 'Basic bXkrY2xpZW50OnMlM0FjcmV0'
 */
export function basicAuthorization(clientId: string, clientSecret: string): string {
  return `Basic ${base64Utf8(`${formUrlEncode(clientId)}:${formUrlEncode(clientSecret)}`)}`;
}

/** A form field value: absent, one value, or a repeated parameter. */
export type FormValue = string | number | boolean | ReadonlyArray<string> | undefined;

/**
 * Serializes fields as an `application/x-www-form-urlencoded` body, in insertion order, skipping
 * `undefined` and repeating the parameter for each item of a list (e.g. RFC 8707 `resource`).
 * @example formBody({ grant_type: 'client_credentials', scope: 'a b' }) // 'grant_type=client_credentials&scope=a+b'
 */
export function formBody(fields: Readonly<Record<string, FormValue>>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    if (typeof value === 'object') {
      for (const item of value) params.append(name, item);
    } else {
      params.append(name, String(value));
    }
  }
  return params.toString();
}

/**
 * Base64url (RFC 4648 §5) of `bytes`, without padding: the encoding of PKCE values (RFC 7636
 * Appendix A) and of JWT segments.
 * @example base64UrlEncode(new Uint8Array([251, 255])) // '-_8'
 */
export function base64UrlEncode(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}
