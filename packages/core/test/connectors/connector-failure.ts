import { inspect } from 'node:util';
import { expect } from 'vitest';
import { ConnectorError, type ConnectorFailure } from '../../src/connectors/types.js';

/**
 * The ConnectorError a promise rejects with. None of `secrets` may show anywhere a log could print
 * it: the message, the cause, or any field below.
 * @example const error = await connectorFailure(signIn(), 'upstream_error', [CLIENT_SECRET, CODE]);
 */
export async function connectorFailure(
  promise: Promise<unknown>,
  expected: ConnectorFailure,
  secrets: readonly string[],
): Promise<ConnectorError> {
  const error = await promise.then(
    () => expect.unreachable('expected a ConnectorError'),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ConnectorError);
  const connectorError = error as ConnectorError;
  expect(connectorError.failure).toBe(expected);
  const printed = inspect(connectorError, { depth: null });
  for (const secret of secrets) expect(printed).not.toContain(secret);
  return connectorError;
}
