import { describeFirstIssue, type FormValues, TokenRequest } from '@idgate/schema';
import { OAuthProtocolError } from '../errors.js';

// RFC 8707 §2 lets `resource` repeat; RFC 6749 §3.2 forbids repeating anything else.
const REPEATABLE = new Set(['resource']);

/**
 * Reads a token request form into a {@link TokenRequest}, with the RFC 6749 §5.2 error for
 * each way it can be wrong: a missing grant_type or field, a repeated parameter
 * (invalid_request), a grant type idgate does not know (unsupported_grant_type).
 * @example parseTokenRequest({ grant_type: 'client_credentials', scope: 'api' })
 */
export function parseTokenRequest(form: FormValues, supported: readonly string[]): TokenRequest {
  const fields: Record<string, string | readonly string[]> = {};
  for (const [name, value] of Object.entries(form)) {
    if (value === undefined || value === '') continue;
    if (Array.isArray(value) && !REPEATABLE.has(name)) {
      throw new OAuthProtocolError('invalid_request', `parameter ${name} must not be repeated`);
    }
    fields[name] = value;
  }
  const grantType = fields.grant_type;
  if (grantType === undefined) throw new OAuthProtocolError('invalid_request', 'grant_type is required');
  if (typeof grantType !== 'string' || !supported.includes(grantType)) {
    throw new OAuthProtocolError(
      'unsupported_grant_type',
      `grant_type ${String(grantType).slice(0, 64)} is not supported`,
    );
  }
  const parsed = TokenRequest.safeParse(fields);
  if (!parsed.success) {
    const description = describeFirstIssue(parsed.error, {
      input: fields,
      label: (path) => path || 'request',
      terse: true,
    });
    throw new OAuthProtocolError('invalid_request', description);
  }
  return parsed.data;
}
