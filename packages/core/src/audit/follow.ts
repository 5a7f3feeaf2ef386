import type { AuditEvent } from '@idgate/schema';
import type { AuditEventFilter } from '../admin/audit-events.js';
import type { AuditEventRepository } from '../ports/audit-storage.js';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/**
 * The instant (ms) an audit event id was made at: its first 10 characters; undefined for an id
 * that is not one. Lets `Last-Event-ID` resume a stream with only the id.
 * @example auditEventTime('01JD3X0000ABCDEFGHJKMNPQRS') // 1732406400000-ish
 */
export function auditEventTime(id: string): number | undefined {
  if (!/^[0-9A-HJKMNP-TV-Z]{26}$/.test(id)) return undefined;
  let time = 0;
  for (const char of id.slice(0, 10)) time = time * 32 + CROCKFORD.indexOf(char);
  return time;
}

/** How {@link followAuditEvents} polls. */
export interface FollowOptions {
  /** Stops the iteration (the caller went away, Ctrl-C). */
  signal: AbortSignal;
  /** Milliseconds between polls when there was nothing new. */
  intervalMs: number;
  /**
   * Milliseconds behind the newest event seen that each poll reads again: a transaction that
   * commits later than one with a later `occurredAt` (another replica, a slow one) lands behind
   * the position already reached, and is still found as long as it commits within this window.
   */
  windowMs: number;
  /** Resume after this event (a `Last-Event-ID`): its time is read from the id. */
  afterId?: string | undefined;
  /** Where to start without `afterId`: events from this instant (ms) on. */
  fromMs: number;
  /** Waits `ms` or until `signal` aborts; setTimeout unless a test injects its own. */
  wait?: (ms: number, signal: AbortSignal) => Promise<void>;
}

const PAGE = 500;

/**
 * Every matching event from a position on, then each new one as it commits — by any process on
 * the same database — until `signal` aborts. Polls by keyset from a little behind the newest event
 * seen ({@link FollowOptions.windowMs}) and drops the ids already delivered, so an event is given
 * once and a late commit is not skipped. Behind `GET /admin/v1/events/stream` and `idgate audit --follow`.
 * @example for await (const event of followAuditEvents(storage.auditEvents, {}, { signal, intervalMs: 1000, windowMs: 5000, fromMs: Date.now() })) print(event);
 */
export async function* followAuditEvents(
  events: Pick<AuditEventRepository, 'list'>,
  filter: AuditEventFilter,
  options: FollowOptions,
): AsyncGenerator<AuditEvent, void, undefined> {
  const wait = options.wait ?? sleep;
  const resumeAt = options.afterId === undefined ? undefined : auditEventTime(options.afterId);
  // Never earlier than where the caller starts: the window must not replay what came before.
  const floor = resumeAt ?? options.fromMs;
  let newest = floor;
  const seen = new Map<string, number>();
  if (options.afterId !== undefined && resumeAt !== undefined) seen.set(options.afterId, resumeAt);
  while (!options.signal.aborted) {
    let after = { occurredAt: new Date(Math.max(floor, newest - options.windowMs)), id: '' };
    let delivered = 0;
    for (;;) {
      const page = await events.list({ ...filter, limit: PAGE, after: { ...after } });
      for (const event of page) {
        const at = Date.parse(event.occurredAt);
        if (seen.has(event.id) || at < floor) continue;
        // An id at the resume instant sorting before the resumed one was delivered before.
        if (
          resumeAt !== undefined &&
          at === resumeAt &&
          options.afterId !== undefined &&
          event.id < options.afterId
        )
          continue;
        seen.set(event.id, at);
        newest = Math.max(newest, at);
        delivered++;
        if (options.signal.aborted) return;
        yield event;
      }
      const last = page.at(-1);
      if (page.length < PAGE || last === undefined) break;
      after = { occurredAt: new Date(last.occurredAt), id: last.id };
    }
    for (const [id, at] of seen) if (at < newest - options.windowMs) seen.delete(id);
    if (delivered === 0) await wait(options.intervalMs, options.signal);
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done);
  });
}
