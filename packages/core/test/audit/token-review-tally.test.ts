import { AuditEvent } from '@idgate/schema';
import { describe, expect, it } from 'vitest';
import { type TokenReviewDecision, TokenReviewTally } from '../../src/audit/token-review-tally.js';
import { manualClock } from '../helpers.js';

const T0 = Date.parse('2026-11-21T10:00:00Z');
const at = (seconds: number) => new Date(T0 + seconds * 1000).toISOString();

const ok: TokenReviewDecision = { cluster: 'prod', apiKeyId: 'k1', authenticated: true, reason: null };
const expired: TokenReviewDecision = {
  cluster: 'prod',
  apiKeyId: 'k1',
  authenticated: false,
  reason: 'expired',
};
const otherKey: TokenReviewDecision = {
  cluster: null,
  apiKeyId: 'k2',
  authenticated: false,
  reason: 'expired',
};

describe('TokenReviewTally, aggregated', () => {
  it('counts decisions per cluster, API key, outcome and reason, from the first one to the drain', () => {
    const clock = manualClock(T0);
    const tally = new TokenReviewTally({ mode: 'aggregated', clock });
    tally.record(ok);
    clock.advance(5);
    tally.record(expired);
    tally.record({ ...ok });
    clock.advance(5);
    tally.record(otherKey);
    tally.record(expired);
    expect(tally.pending).toBe(3);

    const events = tally.drain(T0 + 60_000);
    for (const event of events) expect(AuditEvent.parse(event)).toEqual(event);
    expect(events.map((e) => [e.actor.kind, e.outcome, e.occurredAt, e.details])).toEqual([
      ['system', 'success', at(60), { ...ok, count: 2, firstAt: at(0) }],
      ['system', 'failure', at(60), { ...expired, count: 2, firstAt: at(5) }],
      ['system', 'failure', at(60), { ...otherKey, count: 1, firstAt: at(10) }],
    ]);
    expect(new Set(events.map((e) => e.id)).size).toBe(3);
    expect(tally.pending).toBe(0);
    expect(tally.drain(T0 + 120_000)).toEqual([]);
  });

  it('keeps the counts of a drain that could not be written for the next one', () => {
    const clock = manualClock(T0);
    const tally = new TokenReviewTally({ mode: 'aggregated', clock });
    tally.record(expired);
    tally.record(expired);
    const failed = tally.drain(T0 + 60_000);
    clock.advance(70);
    tally.record(expired);
    tally.restore(failed);
    expect(tally.drain(T0 + 120_000).map((e) => e.details)).toEqual([
      { ...expired, count: 3, firstAt: at(0) },
    ]);
  });
});

describe('TokenReviewTally, all', () => {
  it('gives one event per decision at its own instant, acted by its API key', () => {
    const clock = manualClock(T0);
    const tally = new TokenReviewTally({ mode: 'all', clock });
    tally.record(ok);
    clock.advance(1);
    tally.record(expired);
    const events = tally.drain(T0 + 60_000);
    expect(events.map((e) => [e.actor, e.occurredAt, e.details.count, e.details.firstAt])).toEqual([
      [{ kind: 'api-key', id: 'k1' }, at(0), 1, at(0)],
      [{ kind: 'api-key', id: 'k1' }, at(1), 1, at(1)],
    ]);
  });

  it('aggregates past maxSingles, so a long outage costs bounded memory and loses no count', () => {
    const clock = manualClock(T0);
    const tally = new TokenReviewTally({ mode: 'all', clock, maxSingles: 3 });
    for (let i = 0; i < 5; i++) tally.record(expired);
    expect(tally.pending).toBe(4);
    const failed = tally.drain(T0 + 60_000);
    for (let i = 0; i < 2; i++) tally.record(ok);
    tally.restore(failed);
    expect(tally.pending).toBe(4);
    const events = tally.drain(T0 + 120_000);
    // A restored single goes before the newer ones (it was decided first); the rest are counted.
    expect(events.map((e) => [e.details.reason, e.details.count])).toEqual([
      ['expired', 1],
      [null, 1],
      [null, 1],
      ['expired', 4],
    ]);
  });
});
