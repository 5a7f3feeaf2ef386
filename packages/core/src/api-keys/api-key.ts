import type { ApiKeyScope, OAuthErrorCode, ProblemCode } from '@idgate/schema';
import { IdgateError } from '../errors.js';
import { base64url, sha256 } from '../internal/encoding.js';
import type { ApiKeyRecord } from '../model.js';
import { type Random, webCryptoRandom } from '../ports/runtime.js';
import { constantTimeEqual, randomBase32 } from '../secrets.js';
import { holdsScope } from './scopes.js';

const KEY_PATTERN = /^(idg_[a-z2-7]{8})_[A-Za-z0-9_-]{43}$/;

/** A freshly generated API key: `key` is shown once, only `prefix` and `hash` are stored. */
export interface GeneratedApiKey {
  key: string;
  prefix: string;
  hash: string;
}

/**
 * Generates an API key `idg_<8 characters>_<43 characters>`: the first part is a public prefix
 * that finds the record, the rest 256 random bits.
 * @example const { key, prefix, hash } = await generateApiKey();
 */
export async function generateApiKey(random: Random = webCryptoRandom): Promise<GeneratedApiKey> {
  const prefix = `idg_${randomBase32(random, 8)}`;
  const key = `${prefix}_${base64url(random.bytes(32))}`;
  return { key, prefix, hash: await sha256(key) };
}

/** Why an API key was not accepted: the codes of {@link ApiKeyError}. */
export type ApiKeyFailure = 'missing' | 'invalid' | 'forbidden';

const API_KEY_ANSWERS: Record<
  ApiKeyFailure,
  { status: 401 | 403; oauthError: OAuthErrorCode; problemCode: ProblemCode; challenge?: string }
> = {
  // RFC 6750 §3.1: a request without credentials gets a bare challenge, a bad one `invalid_token`.
  missing: {
    status: 401,
    oauthError: 'invalid_request',
    problemCode: 'api_key_missing',
    challenge: 'Bearer realm="idgate"',
  },
  invalid: {
    status: 401,
    oauthError: 'invalid_token',
    problemCode: 'api_key_invalid',
    challenge: 'Bearer realm="idgate", error="invalid_token"',
  },
  forbidden: { status: 403, oauthError: 'insufficient_scope', problemCode: 'api_key_scope' },
};

/**
 * An API key that is missing, unknown, revoked, or lacks the scope an endpoint needs: 401 with a
 * `WWW-Authenticate: Bearer` challenge for a missing or bad key, 403 for a good key without the
 * scope — naming it (`scope`) in an `insufficient_scope` challenge (RFC 6750 §3.1) and as the
 * problem's `scope` member.
 * @example
 * throw new ApiKeyError('forbidden', 'the API key lacks the "users:write" scope', { scope: 'users:write' });
 */
export class ApiKeyError extends IdgateError<ApiKeyFailure> {
  override readonly name: string = 'ApiKeyError';
  readonly kind = 'api_key' as const;
  /** The scope a `forbidden` key lacks, when the refusal is about one. */
  readonly scope: ApiKeyScope | undefined;

  constructor(
    code: ApiKeyFailure,
    description: string,
    options: { cause?: unknown; scope?: ApiKeyScope } = {},
  ) {
    const answer = API_KEY_ANSWERS[code];
    const challenge =
      code === 'forbidden' && options.scope !== undefined
        ? `Bearer realm="idgate", error="insufficient_scope", scope="${options.scope}"`
        : answer.challenge;
    super(code, description, answer.status, {
      ...(options.cause === undefined ? {} : { cause: options.cause }),
      ...(challenge === undefined ? {} : { headers: { 'WWW-Authenticate': challenge } }),
    });
    this.scope = options.scope;
  }

  get oauthError(): OAuthErrorCode {
    return API_KEY_ANSWERS[this.code].oauthError;
  }

  get problemCode(): ProblemCode {
    return API_KEY_ANSWERS[this.code].problemCode;
  }

  override get problemMembers(): Readonly<Record<string, string>> | undefined {
    return this.scope === undefined ? undefined : { scope: this.scope };
  }
}

/**
 * The refusal of a key that lacks `scope`: 403, naming the scope.
 * @example throw lacksScope('users:write');
 */
export function lacksScope(scope: ApiKeyScope, why = ''): ApiKeyError {
  return new ApiKeyError('forbidden', `the API key lacks the "${scope}" scope${why}`, { scope });
}

/**
 * The key in an Authorization header: `Bearer <key>` (scheme in any case) or the bare key.
 * @example apiKeyFromAuthorization('Bearer idg_abcdefgh_...')
 */
export function apiKeyFromAuthorization(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const value = header.trim();
  if (value === '') return undefined;
  const bearer = /^Bearer\s+(\S+)$/i.exec(value);
  return bearer === null ? value : bearer[1];
}

/**
 * Whether an API key works at `now`: not revoked and not expired.
 * @example if (!isApiKeyLive(record, new Date(clock.now()))) refuse();
 */
export function isApiKeyLive(record: ApiKeyRecord, now: Date): boolean {
  const expiresAt = record.expiresAt ?? null;
  return record.revokedAt === null && (expiresAt === null || expiresAt.getTime() > now.getTime());
}

/**
 * Checks a presented API key: well-formed, known by its prefix, hash equal in constant time, not
 * revoked, not expired at `now`, and holding `scope` (`admin` holds every scope of the admin API,
 * not `tokenreview`: see `holdsScope`); `null` accepts any live key. An expired key is refused like an unknown one.
 * `now` is the caller's clock reading (by default the system time).
 * @throws ApiKeyError
 * @example const record = await authenticateApiKey(key, 'tokenreview', (prefix) => storage.apiKeys.findByPrefix(prefix), new Date(clock.now()));
 */
export async function authenticateApiKey(
  presented: string | undefined,
  scope: ApiKeyScope | null,
  findByPrefix: (prefix: string) => Promise<ApiKeyRecord | undefined>,
  now: Date = new Date(),
): Promise<ApiKeyRecord> {
  if (presented === undefined) throw new ApiKeyError('missing', 'an API key is required');
  const match = KEY_PATTERN.exec(presented);
  if (match === null) throw new ApiKeyError('invalid', 'the API key is not valid');
  const record = await findByPrefix(match[1] as string);
  const hash = await sha256(presented);
  if (record === undefined || !constantTimeEqual(hash, record.hash) || !isApiKeyLive(record, now)) {
    throw new ApiKeyError('invalid', 'the API key is not valid');
  }
  if (scope !== null && !holdsScope(record.scopes, scope)) throw lacksScope(scope);
  return record;
}
