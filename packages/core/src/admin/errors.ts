import {
  type DescribeIssueOptions,
  describeFirstIssue,
  type OAuthErrorCode,
  ProblemCode,
} from '@idgate/schema';
import { IdgateError } from '../errors.js';
import { StorageConflictError } from '../ports/storage.js';

/** Why an administrative action was refused. */
export type AdminErrorCode =
  /** The input is not valid; the message names the first field at fault. */
  | 'invalid_input'
  /** There is no such object. */
  | 'not_found'
  /** The object exists already (a name is taken, in any case). */
  | 'conflict'
  /** The object is declared outside storage (the configuration file) and cannot be changed here. */
  | 'read_only'
  /** A conditional change (`If-Match`) named a version of the object that is no longer current. */
  | 'precondition_failed';

/** What an administrative action is about (`storage`: all of it, as initialization sees it). */
export type AdminObject =
  | 'user'
  | 'identity'
  | 'client'
  | 'api_key'
  | 'signing_key'
  | 'identity_provider'
  | 'cluster'
  | 'trust'
  | 'group'
  | 'session'
  | 'grant'
  | 'factor'
  | 'audit_event'
  | 'not_before'
  | 'address'
  | 'declarations'
  | 'storage';

const STATUS: Record<AdminErrorCode, number> = {
  invalid_input: 400,
  not_found: 404,
  conflict: 409,
  read_only: 409,
  precondition_failed: 412,
};

const GENERIC_PROBLEM: Record<AdminErrorCode, ProblemCode> = {
  invalid_input: 'invalid_request',
  not_found: 'not_found',
  conflict: 'conflict',
  read_only: 'conflict',
  precondition_failed: 'precondition_failed',
};

/**
 * An administrative action that was refused for a reason the caller can tell the user: the CLI
 * prints the message as it is, the admin API answers a problem whose code names the object
 * (`user_not_found` 404, `client_exists` and `identity_provider_read_only` 409, `invalid_user` 400).
 * @example
 * throw new AdminError('not_found', 'user', `no user ${username}`, { key: username });
 */
export class AdminError extends IdgateError<AdminErrorCode> {
  override readonly name = 'AdminError';
  readonly kind = 'admin' as const;
  /** The name or id the caller gave for the object, when the error is about one. */
  readonly key: string | undefined;
  /** A problem code more specific than the object's (`weak_password` for an `invalid_input` user). */
  readonly #problem: ProblemCode | undefined;

  constructor(
    code: AdminErrorCode,
    readonly object: AdminObject,
    message: string,
    options: { key?: string; cause?: unknown; problem?: ProblemCode } = {},
  ) {
    super(code, message, STATUS[code], options.cause === undefined ? {} : { cause: options.cause });
    this.key = options.key;
    this.#problem = options.problem;
  }

  get oauthError(): OAuthErrorCode {
    return 'invalid_request';
  }

  /** `<object>_not_found`, `<object>_exists`, `<object>_read_only` or `invalid_<object>`, where idgate names one. */
  get problemCode(): ProblemCode {
    if (this.#problem !== undefined) return this.#problem;
    const specific = {
      // `invalid_grant` is the token endpoint's OAuth error: a bad grant id is `invalid_grant_id`.
      invalid_input: this.object === 'grant' ? 'invalid_grant_id' : `invalid_${this.object}`,
      not_found: `${this.object}_not_found`,
      conflict: `${this.object}_exists`,
      read_only: `${this.object}_read_only`,
      precondition_failed: 'precondition_failed',
    }[this.code];
    const known = ProblemCode.safeParse(specific);
    return known.success ? known.data : GENERIC_PROBLEM[this.code];
  }
}

/**
 * True for an {@link AdminError}, also one thrown by another copy of this package.
 * @example if (isAdminError(error) && error.code === 'not_found') reply.status(404);
 */
export function isAdminError(value: unknown): value is AdminError {
  return (
    value instanceof AdminError ||
    (value instanceof Error && value.name === 'AdminError' && 'object' in value)
  );
}

/** A schema of `@idgate/schema`, as far as parsing goes. */
export interface InputSchema<T> {
  safeParse(
    input: unknown,
  ): { success: true; data: T } | { success: false; error: Parameters<typeof describeFirstIssue>[0] };
}

/**
 * `input` checked against `schema`.
 * @throws AdminError `invalid_input`, the first issue worded by `describeFirstIssue` (`options`
 * name the fields as the caller's user knows them).
 * @example const input = parseAdminInput(CreateUserInput, body, 'user');
 */
export function parseAdminInput<T>(
  schema: InputSchema<T>,
  input: unknown,
  object: AdminObject,
  options: Omit<DescribeIssueOptions, 'input'> = {},
): T {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  throw new AdminError('invalid_input', object, describeFirstIssue(result.error, { ...options, input }));
}

/**
 * What `write` returns; a unique-key collision in storage (on `field`, when given) is thrown as
 * the `refusal` instead.
 * @example const user = await refusingConflicts(() => storage.users.create(record), () => taken, 'username');
 */
export async function refusingConflicts<T>(
  write: () => Promise<T>,
  refusal: () => AdminError | Promise<AdminError>,
  field?: string,
): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (error instanceof StorageConflictError && (field === undefined || error.field === field))
      throw await refusal();
    throw error;
  }
}
