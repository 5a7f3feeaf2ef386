import type { ApiKeyScope } from '@idgate/schema';
import { base64url, constantTimeEqual, randomBase32, randomBytes, sha256 } from '../internal/encoding.js';
import type { ApiKeyRecord } from '../model.js';

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
export async function generateApiKey(): Promise<GeneratedApiKey> {
  const prefix = `idg_${randomBase32(8)}`;
  const key = `${prefix}_${base64url(randomBytes(32))}`;
  return { key, prefix, hash: await sha256(key) };
}

/** Why an API key was not accepted; each maps to a status and a stable problem code. */
export type ApiKeyFailure = 'missing' | 'invalid' | 'forbidden';

/** An API key that is missing, unknown, revoked, or lacks the scope an endpoint needs. */
export class ApiKeyError extends Error {
  override readonly name = 'ApiKeyError';
  constructor(
    readonly failure: ApiKeyFailure,
    message: string,
  ) {
    super(message);
  }

  /** 401 for a missing or bad key, 403 for a good key without the scope. */
  get status(): 401 | 403 {
    return this.failure === 'forbidden' ? 403 : 401;
  }

  /** Stable code for RFC 9457 problem bodies. */
  get code(): string {
    return { missing: 'api_key_missing', invalid: 'api_key_invalid', forbidden: 'api_key_scope' }[
      this.failure
    ];
  }
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
 * Checks a presented API key: well-formed, known by its prefix, hash equal in constant time, not
 * revoked, and carrying `scope` (an `admin` key does not imply `tokenreview`); `null` accepts any
 * live key.
 * @throws ApiKeyError
 * @example const record = await authenticateApiKey(key, 'tokenreview', (prefix) => storage.apiKeys.findByPrefix(prefix));
 */
export async function authenticateApiKey(
  presented: string | undefined,
  scope: ApiKeyScope | null,
  findByPrefix: (prefix: string) => Promise<ApiKeyRecord | undefined>,
): Promise<ApiKeyRecord> {
  if (presented === undefined) throw new ApiKeyError('missing', 'an API key is required');
  const match = KEY_PATTERN.exec(presented);
  if (match === null) throw new ApiKeyError('invalid', 'the API key is not valid');
  const record = await findByPrefix(match[1] as string);
  const hash = await sha256(presented);
  if (record === undefined || !constantTimeEqual(hash, record.hash) || record.revokedAt !== null) {
    throw new ApiKeyError('invalid', 'the API key is not valid');
  }
  if (scope !== null && !record.scopes.includes(scope))
    throw new ApiKeyError('forbidden', `the API key lacks the "${scope}" scope`);
  return record;
}
