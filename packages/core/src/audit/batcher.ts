import type { AuditEvent } from '@idgate/schema';
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

interface Waiting {
  events: readonly AuditEvent[];
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * A group-commit writer of audit events for paths that write nothing else per request (tokens of
 * client_credentials): an append to an idle batcher is written after one turn of the event loop
 * (`schedule`), with whatever else was appended by then; appends that arrive while a batch is
 * being written wait together and go as the next batch — one `append`, one multi-row insert, in
 * one transaction. Every caller awaits its own batch's commit, so no answer goes out before its
 * event is stored, and a failed batch fails every caller in it. (Without the first turn, a
 * database whose writes complete synchronously — SQLite — would never see two at once.)
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
  const maxBatch = options.maxBatch ?? 500;
  const schedule = options.schedule ?? ((run: () => void) => void setTimeout(run, 0));
  let queue: Waiting[] = [];
  // From the first append to an idle batcher until the queue is empty again.
  let writing = false;

  const take = (): Waiting[] => {
    let size = 0;
    let taken = 0;
    while (taken < queue.length && (taken === 0 || size + (queue[taken]?.events.length ?? 0) <= maxBatch)) {
      size += queue[taken]?.events.length ?? 0;
      taken++;
    }
    const batch = queue.slice(0, taken);
    queue = queue.slice(taken);
    return batch;
  };

  const writeAll = async (): Promise<void> => {
    try {
      while (queue.length > 0) {
        const batch = take();
        const events = batch.flatMap((waiting) => waiting.events);
        try {
          await storage.transaction((tx) => tx.auditEvents.append(events));
          for (const waiting of batch) waiting.resolve();
        } catch (error) {
          for (const waiting of batch) waiting.reject(error);
        }
      }
    } finally {
      writing = false;
    }
  };

  return {
    append(events) {
      if (events.length === 0) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        queue.push({ events, resolve, reject });
        if (writing) return;
        writing = true;
        schedule(() => void writeAll());
      });
    },
  };
}
