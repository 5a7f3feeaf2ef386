import type { IdgateConfig } from '../config.js';

/** How the live tail of the audit trail reads the table, in milliseconds. */
export interface AuditFollowTiming {
  /** Between reads when nothing new came. */
  intervalMs: number;
  /** How far behind the newest event seen each read looks again. */
  windowMs: number;
  /** Between keep-alive comments of the server-sent stream. */
  heartbeatMs: number;
}

/** Seconds the window looks back past the TokenReview writer's interval in `all` mode. */
const LATE_WRITER_MARGIN = 10;

/**
 * The live tail's timing from `audit.stream`, for `GET /admin/v1/events/stream` and `idgate audit
 * --follow` alike. Without a window set, it is 10 s — or, when every TokenReview is its own event
 * (`audit.tokenReview: all`), the writer's interval plus 10 s, since those events commit up to an
 * interval after their `occurredAt` and a shorter window would step over them.
 * @example auditFollowTiming(config.audit) // { intervalMs: 1000, windowMs: 10000, heartbeatMs: 15000 }
 */
export function auditFollowTiming(audit: IdgateConfig['audit']): AuditFollowTiming {
  const window =
    audit.stream.window ??
    (audit.tokenReview === 'all' ? audit.tokenReviewInterval + LATE_WRITER_MARGIN : LATE_WRITER_MARGIN);
  return {
    intervalMs: audit.stream.pollInterval * 1000,
    windowMs: window * 1000,
    heartbeatMs: audit.stream.heartbeat * 1000,
  };
}
