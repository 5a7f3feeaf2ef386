import type { AdminError } from './admin/errors.js';
import type { ApiKeyError } from './api-keys/api-key.js';
import type { ConnectorError } from './connectors/types.js';
import { IdgateError, type OAuthProtocolError } from './errors.js';
import type { StorageConflictError, StorageUnavailableError } from './ports/storage.js';

// The family apart from its base class: the members import the base, and this names them all.

/**
 * Every member of the family, for narrowing by `kind` and then switching on `code`.
 * @example
 * if (isIdgateError(error) && error.kind === 'api_key' && error.code === 'forbidden') askForAnotherKey();
 */
export type AnyIdgateError =
  | OAuthProtocolError
  | ApiKeyError
  | ConnectorError
  | StorageConflictError
  | StorageUnavailableError
  | AdminError;

/**
 * True for any {@link IdgateError}, also one thrown by another copy of this package.
 * @example
 * if (isIdgateError(error)) reply.status(error.status).send(error.toJSON());
 */
export function isIdgateError(value: unknown): value is AnyIdgateError {
  return (
    value instanceof IdgateError ||
    (value instanceof Error && 'family' in value && value.family === 'idgate' && 'kind' in value)
  );
}
