import type { AdminPorts } from '../../src/admin/ports.js';
import { createAuditEventIds } from '../../src/audit/record.js';
import { createMemoryStorage, insecureTestPasswordHasher } from '../../src/testing.js';
import { manualClock, SECRET } from '../helpers.js';

/**
 * Admin ports over fresh in-memory storage, a clock the test moves, and a fast test hasher; their
 * audit events sort in the order they were recorded, as an instance's do.
 */
export function adminPorts(overrides: Partial<Omit<AdminPorts, 'clock'>> = {}) {
  const ports = {
    storage: createMemoryStorage(),
    hasher: insecureTestPasswordHasher(),
    keyPolicy: { alg: 'ES256', secret: SECRET, maxTokenLifetimeSeconds: 3600 },
    lifetimes: { accessTokenTtl: 600, refreshTokenTtl: 86_400, maxAccessTokenTtl: 3600 },
    auditIds: createAuditEventIds(),
    ...overrides,
    clock: manualClock(),
  } satisfies AdminPorts;
  return ports;
}

/** What `promise` was rejected with; fails the test when it was fulfilled. */
export async function rejection(promise: Promise<unknown>): Promise<Error> {
  return promise.then(
    () => {
      throw new Error('expected a refusal');
    },
    (error: Error) => error,
  );
}

/** What `work` threw; fails the test when it returned. */
export function thrown(work: () => unknown): Error {
  try {
    work();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a refusal');
}
