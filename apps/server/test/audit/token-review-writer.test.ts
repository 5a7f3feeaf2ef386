import type { AuditEvent } from '@idgate/schema';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startTokenReviewAudit } from '../../src/audit/token-review-writer.js';

const denied = { cluster: 'prod', apiKeyId: 'k1', authenticated: false, reason: 'expired' };

// The background writer alone, over an audit trail that a test switches off and on.
describe('the TokenReview audit writer', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: Date.parse('2026-11-21T10:00:00Z') });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  const trail = () => {
    const stored: AuditEvent[] = [];
    let down = false;
    return {
      stored,
      setDown(value: boolean) {
        down = value;
      },
      auditEvents: {
        append: async (events: readonly AuditEvent[]) => {
          if (down) throw new Error('connect ECONNREFUSED');
          stored.push(...events);
        },
      },
    };
  };
  const count = (events: AuditEvent[]) =>
    events.reduce((sum, e) => sum + (e.type === 'token-review.decided' ? e.details.count : 0), 0);

  it('writes every interval, keeps the counts while the database is down, and says so once', async () => {
    const t = trail();
    const failed = vi.fn();
    const recovered = vi.fn();
    const audit = startTokenReviewAudit({
      settings: { tokenReview: 'aggregated', tokenReviewInterval: 60 },
      clock: { now: () => Date.now() },
      auditEvents: t.auditEvents,
      onWriteFailed: failed,
      onWriteRecovered: recovered,
    });
    audit.record(denied);
    audit.record(denied);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(count(t.stored)).toBe(2);

    t.setDown(true);
    audit.record(denied);
    await vi.advanceTimersByTimeAsync(60_000);
    audit.record(denied);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(failed).toHaveBeenCalledTimes(1);
    expect(count(t.stored)).toBe(2);

    t.setDown(false);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(recovered).toHaveBeenCalledTimes(1);
    expect(t.stored.slice(1).map((e) => e.type === 'token-review.decided' && e.details)).toEqual([
      expect.objectContaining({ count: 2, firstAt: '2026-11-21T10:01:00.000Z' }),
    ]);
    await audit.stop();
  });

  it('in all mode writes as soon as a batch of 500 is full, and the rest on stop', async () => {
    const t = trail();
    const audit = startTokenReviewAudit({
      settings: { tokenReview: 'all', tokenReviewInterval: 60 },
      clock: { now: () => Date.now() },
      auditEvents: t.auditEvents,
    });
    for (let i = 0; i < 501; i++) audit.record(denied);
    await vi.advanceTimersByTimeAsync(0);
    expect(t.stored.length).toBeGreaterThanOrEqual(500);
    await audit.stop();
    expect(t.stored).toHaveLength(501);
    expect(new Set(t.stored.map((e) => e.id)).size).toBe(501);
  });
});
