import { IdgateHttpError } from '@idgate/sdk';
import { expect } from 'vitest';

/**
 * The `IdgateHttpError` a promise rejects with; fails the test when it resolves or rejects with
 * anything else.
 * @example expect((await httpError(admin.getUser('nobody'))).status).toBe(404);
 */
export async function httpError(promise: Promise<unknown>): Promise<IdgateHttpError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(IdgateHttpError);
  return error as IdgateHttpError;
}
