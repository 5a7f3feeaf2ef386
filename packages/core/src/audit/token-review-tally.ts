import type { AuditEventOf } from '@idgate/schema';
import { storedUserAgent } from '@idgate/schema';
import type { Clock } from '../ports/runtime.js';
import { type AuditEventIds, createAuditEventIds, originFields, type RequestOrigin } from './record.js';

/**
 * One TokenReview decision as the audit trail counts it: who asked, and what the answer was.
 * @example const decision: TokenReviewDecision = { cluster: 'prod', apiKeyId: key.id, authenticated: false, reason: 'expired' };
 */
export interface TokenReviewDecision {
  /** The cluster the asking API key is bound to; null for an unbound key. */
  cluster: string | null;
  apiKeyId: string | null;
  authenticated: boolean;
  /** Why it was denied (`expired`, `revoked`, …); null when authenticated. */
  reason: string | null;
}

/**
 * How TokenReview decisions reach the audit trail: `aggregated`, one event per (cluster, API key,
 * outcome, reason) and interval with a `count`; or `all`, one event per decision.
 * @example new TokenReviewTally({ mode: 'all' satisfies TokenReviewAuditMode, clock });
 */
export type TokenReviewAuditMode = 'aggregated' | 'all';

/**
 * A `token-review.decided` event.
 * @example const events: TokenReviewEvent[] = tally.drain(clock.now());
 */
export type TokenReviewEvent = AuditEventOf<'token-review.decided'>;

/**
 * How a {@link TokenReviewTally} counts.
 * @example const options: TokenReviewTallyOptions = { mode: 'aggregated', clock: systemClock };
 */
export interface TokenReviewTallyOptions {
  mode: TokenReviewAuditMode;
  clock: Clock;
  /** The ids of the events it drains: the instance's (see `createAuditEventIds`); by default its own. */
  ids?: AuditEventIds;
  /**
   * In `all` mode, how many single decisions wait for a drain at most; past it (a database that
   * stays down, a burst) decisions are counted as aggregated ones, so memory stays bounded and no
   * decision goes uncounted. Default 10 000.
   */
  maxSingles?: number;
}

interface Tally {
  decision: TokenReviewDecision;
  count: number;
  firstAt: number;
}

interface Single {
  decision: TokenReviewDecision;
  at: number;
  origin: RequestOrigin | undefined;
}

/**
 * The TokenReview decisions not yet written to the audit trail, held in memory so the review path
 * does no I/O: `record` costs a clock read and a Map update (or, in `all` mode, one small object);
 * a background writer calls `drain` every interval and appends what it returns, and gives back
 * with `restore` what it could not write, for the next drain.
 *
 * Memory is bounded: aggregated tallies are one per (cluster, API key, outcome, reason) — API keys
 * that exist times a closed set of reasons — and singles stop at `maxSingles` (see
 * {@link TokenReviewTallyOptions.maxSingles}).
 * @example
 * const tally = new TokenReviewTally({ mode: 'aggregated', clock: systemClock });
 * tally.record({ cluster: 'prod', apiKeyId: 'k1', authenticated: false, reason: 'expired' });
 * await storage.auditEvents.append(tally.drain(Date.now())); // one event, count 1
 */
export class TokenReviewTally {
  readonly #mode: TokenReviewAuditMode;
  readonly #clock: Clock;
  readonly #maxSingles: number;
  readonly #ids: AuditEventIds;
  #tallies = new Map<string, Tally>();
  #singles: Single[] = [];

  constructor(options: TokenReviewTallyOptions) {
    this.#mode = options.mode;
    this.#clock = options.clock;
    this.#maxSingles = options.maxSingles ?? 10_000;
    this.#ids = options.ids ?? createAuditEventIds();
  }

  /** How many events a drain now would return. */
  get pending(): number {
    return this.#singles.length + this.#tallies.size;
  }

  /** Whether decisions become one event each (`all`): only then does `record` keep their origin. */
  get perDecision(): boolean {
    return this.#mode === 'all';
  }

  /**
   * Counts one decision (no I/O, never throws). In `all` mode its event names `origin`, the
   * review request (address, user agent, request id, trace id); an aggregated one names none.
   */
  record(decision: TokenReviewDecision, origin?: RequestOrigin): void {
    const at = this.#clock.now();
    if (this.#mode === 'all' && this.#singles.length < this.#maxSingles) {
      this.#singles.push({ decision, at, origin });
      return;
    }
    this.#count(decision, 1, at);
  }

  /**
   * The events of every decision recorded since the last drain, and a fresh start: singles at
   * the instant of their decision, aggregates at `now` with `count` and `firstAt`.
   */
  drain(now: number): TokenReviewEvent[] {
    const singles = this.#singles;
    const tallies = this.#tallies;
    this.#singles = [];
    this.#tallies = new Map();
    const events = singles.map(({ decision, at, origin }) =>
      reviewEvent(this.#ids, decision, 1, at, at, origin ?? {}),
    );
    for (const { decision, count, firstAt } of tallies.values())
      events.push(reviewEvent(this.#ids, decision, count, firstAt, now, undefined));
    return events;
  }

  /**
   * Takes back events a drain returned that could not be written, so the next drain has them:
   * singles stay singles while there is room, the rest are merged into the tallies.
   */
  restore(events: readonly TokenReviewEvent[]): void {
    const singles: Single[] = [];
    for (const { details, occurredAt, address, userAgent, requestId, traceId } of events) {
      const decision: TokenReviewDecision = {
        cluster: details.cluster,
        apiKeyId: details.apiKeyId,
        authenticated: details.authenticated,
        reason: details.reason,
      };
      const single =
        this.#mode === 'all' &&
        details.count === 1 &&
        details.firstAt === occurredAt &&
        singles.length + this.#singles.length < this.#maxSingles;
      if (single)
        singles.push({
          decision,
          at: Date.parse(occurredAt),
          origin: { address, userAgent, requestId, traceId },
        });
      else this.#count(decision, details.count, Date.parse(details.firstAt));
    }
    // What was decided first goes first.
    if (singles.length > 0) this.#singles = [...singles, ...this.#singles];
  }

  #count(decision: TokenReviewDecision, count: number, firstAt: number): void {
    const key = `${decision.cluster ?? ''}\n${decision.apiKeyId ?? ''}\n${decision.authenticated ? 1 : 0}\n${decision.reason ?? ''}`;
    const tally = this.#tallies.get(key);
    if (tally === undefined) this.#tallies.set(key, { decision, count, firstAt });
    else {
      tally.count += count;
      if (firstAt < tally.firstAt) tally.firstAt = firstAt;
    }
  }
}

function reviewEvent(
  ids: AuditEventIds,
  decision: TokenReviewDecision,
  count: number,
  firstAt: number,
  at: number,
  /** The review request of a single decision; undefined for an aggregate. */
  single: RequestOrigin | undefined,
): TokenReviewEvent {
  // A single decision is the API key's; an aggregate is idgate's summary of many.
  const actor: TokenReviewEvent['actor'] =
    single !== undefined && decision.apiKeyId !== null
      ? { kind: 'api-key', id: decision.apiKeyId }
      : { kind: 'system', id: null };
  return {
    id: ids(at),
    type: 'token-review.decided',
    occurredAt: new Date(at).toISOString(),
    actor,
    subject: null,
    clientId: null,
    ...originFields(single),
    userAgent: storedUserAgent(single?.userAgent),
    outcome: decision.authenticated ? 'success' : 'failure',
    details: {
      cluster: decision.cluster,
      apiKeyId: decision.apiKeyId,
      authenticated: decision.authenticated,
      reason: decision.authenticated ? null : decision.reason,
      count,
      firstAt: new Date(firstAt).toISOString(),
    },
  };
}
