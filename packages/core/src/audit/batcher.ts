import type { AuditEvent } from '@idgate/schema';
import { groupCommit } from '../internal/group-commit.js';
import type { AuditEventRepository } from '../ports/audit-storage.js';

/**
 * Appends audit events grouped with those appended at the same time (see {@link createAuditBatcher}).
 * @example const context: TokenEndpointContext = { ...context, auditBatcher: createAuditBatcher(storage) };
 */
export interface AuditBatcher {
  /**
   * Resolves once `events` are committed with their batch; rejects with the storage's error
   * (a 503 for a database that is away) when that batch could not be written.
   */
  append(events: readonly AuditEvent[]): Promise<void>;
}

/**
 * What a batcher writes through: a transaction over the audit trail (any `Storage` is one).
 * @example const batcher = createAuditBatcher(storage satisfies AuditBatchStorage);
 */
export interface AuditBatchStorage {
  transaction<T>(work: (storage: { auditEvents: AuditEventRepository }) => Promise<T>): Promise<T>;
}

/**
 * A group-commit writer of audit events for paths that write nothing else per request (tokens of
 * client_credentials, token exchanges), through {@link groupCommit}: one `append`, one multi-row
 * insert, in one transaction per batch. Every caller awaits its own batch's commit, so no answer
 * goes out before its event is stored, and a failed batch fails every caller in it.
 * @example
 * const batcher = createAuditBatcher(storage);
 * await batcher.append(completeAuditEvents([issued], clock)); // then answer the token
 */
export function createAuditBatcher(
  storage: AuditBatchStorage,
  options: {
    /** Events per batch at most (a multi-row insert has a parameter limit). Default 500. */
    maxBatch?: number;
    /** Runs the first write of an idle batcher: `setTimeout(run, 0)` unless given (Node: `setImmediate`). */
    schedule?: (run: () => void) => void;
  } = {},
): AuditBatcher {
  const submit = groupCommit<AuditEvent, void>(
    async (events) => {
      await storage.transaction((tx) => tx.auditEvents.append(events));
      return events.map(() => undefined);
    },
    { maxBatch: options.maxBatch ?? 500, schedule: options.schedule },
  );
  return {
    async append(events) {
      await submit(events);
    },
  };
}
