// Query parameters whose values are credentials or one-time secrets; never logged.
const SECRET_PARAMETERS = new Set([
  'access_token',
  'refresh_token',
  'id_token',
  'id_token_hint',
  'code',
  'code_verifier',
  'client_secret',
  'password',
  'token',
  'state',
  'nonce',
]);

/** The URL with the values of secret-bearing query parameters replaced, for logs. */
export function redactUrl(url: string): string {
  const question = url.indexOf('?');
  if (question === -1) return url;
  const params = new URLSearchParams(url.slice(question + 1));
  let changed = false;
  for (const name of new Set(params.keys())) {
    if (SECRET_PARAMETERS.has(name.toLowerCase())) {
      params.set(name, '[redacted]');
      changed = true;
    }
  }
  return changed ? `${url.slice(0, question)}?${params.toString()}` : url;
}
