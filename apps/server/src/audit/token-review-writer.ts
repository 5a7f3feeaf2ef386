import {
  type AuditEventIds,
  type AuditEventRepository,
  type Clock,
  type RequestOrigin,
  type TokenReviewDecision,
  TokenReviewTally,
} from '@idgate/core';
import type { IdgateConfig } from '../config.js';

/** The `token-review.decided` events of this process: recorded in memory, written in the background. */
export interface TokenReviewAudit {
  /**
   * Whether each decision is an event of its own (`all`): only then is `origin` worth building
   * for {@link record}.
   */
  readonly perDecision: boolean;
  /** Counts one decision (in `all` mode with its request's `origin`); no I/O, never awaited on the review path. */
  record(decision: TokenReviewDecision, origin?: RequestOrigin): void;
  /**
   * Writes what was recorded so far (after any write in progress). Never rejects: what could not
   * be written is kept for the next flush.
   */
  flush(): Promise<void>;
  /** Stops the timer and flushes one last time (shutdown). */
  stop(): Promise<void>;
}

/** What {@link startTokenReviewAudit} writes with. */
export interface TokenReviewAuditOptions {
  settings: Pick<IdgateConfig['audit'], 'tokenReview' | 'tokenReviewInterval'>;
  clock: Clock;
  /** The ids of the process's audit events (see `createAuditEventIds`). */
  ids?: AuditEventIds;
  /** The audit trail (the server's storage: personal-data policy and JSON-lines stream applied). */
  auditEvents: Pick<AuditEventRepository, 'append'>;
  /** Told once when writing starts failing, and once when it works again. */
  onWriteFailed?: (error: unknown) => void;
  onWriteRecovered?: () => void;
}

/** Rows per insert: far below SQLite's and PostgreSQL's parameter limits. */
const BATCH = 500;

/**
 * Starts the background writer of `audit.tokenReview`: every `audit.tokenReviewInterval` seconds
 * (and in `all` mode as soon as a batch is full) the decisions recorded are appended, 500 rows per
 * insert. A write that fails (the database away) gives its events back to the tally, whose memory
 * is bounded (see `TokenReviewTally`), and is tried again at the next interval.
 */
export function startTokenReviewAudit(options: TokenReviewAuditOptions): TokenReviewAudit {
  const { tokenReview: mode, tokenReviewInterval } = options.settings;
  if (mode === 'off') return { perDecision: false, record() {}, flush: async () => {}, stop: async () => {} };
  const tally = new TokenReviewTally({
    mode,
    clock: options.clock,
    ...(options.ids === undefined ? {} : { ids: options.ids }),
  });
  let failing = false;
  let chain = Promise.resolve();
  let queued = false;

  const write = async (): Promise<void> => {
    queued = false;
    const events = tally.drain(options.clock.now());
    for (let start = 0; start < events.length; start += BATCH) {
      try {
        await options.auditEvents.append(events.slice(start, start + BATCH));
      } catch (error) {
        tally.restore(events.slice(start));
        if (!failing) options.onWriteFailed?.(error);
        failing = true;
        return;
      }
    }
    if (failing && events.length > 0) {
      failing = false;
      options.onWriteRecovered?.();
    }
  };
  const flush = (): Promise<void> => {
    chain = chain.then(write);
    return chain;
  };

  const timer = setInterval(() => void flush(), tokenReviewInterval * 1000);
  // The process may exit with the timer pending: shutdown flushes explicitly.
  timer.unref();
  return {
    perDecision: tally.perDecision,
    record(decision, origin) {
      tally.record(decision, origin);
      if (mode === 'all' && !queued && tally.pending >= BATCH && !failing) {
        queued = true;
        void flush();
      }
    },
    flush,
    stop() {
      clearInterval(timer);
      return flush();
    },
  };
}
