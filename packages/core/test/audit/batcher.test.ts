import { describe, expect, it } from 'vitest';
import { type AuditBatchStorage, createAuditBatcher } from '../../src/audit/batcher.js';
import { type AuditEventDraft, completeAuditEvents, createAuditEventIds } from '../../src/audit/record.js';
import { StorageUnavailableError } from '../../src/ports/storage.js';
import { createMemoryStorage } from '../../src/testing.js';
import { manualClock } from '../helpers.js';

const clock = manualClock();
const ids = createAuditEventIds();
const issued = (jti: string) =>
  completeAuditEvents(
    [
      {
        type: 'token.issued',
        actor: { kind: 'client', id: 'svc' },
        clientId: 'svc',
        details: { grantType: 'client_credentials', scopes: [], audience: ['svc'], jti, grantId: null },
      } satisfies AuditEventDraft,
    ],
    clock,
    ids,
  );

/** Memory storage whose transactions wait for `release()`, counting them and their events. */
function gatedStorage() {
  const storage = createMemoryStorage();
  const batches: number[] = [];
  let open: () => void = () => {};
  const gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  let fail: Error | undefined;
  const gated: AuditBatchStorage = {
    transaction: (work) =>
      storage.transaction(async (tx) => {
        await gate;
        if (fail !== undefined) throw fail;
        return work({
          auditEvents: {
            ...tx.auditEvents,
            append: async (events) => {
              batches.push(events.length);
              await tx.auditEvents.append(events);
            },
          },
        });
      }),
  };
  return {
    storage,
    gated,
    batches,
    release() {
      open();
    },
    failWith(error: Error | undefined) {
      fail = error;
    },
  };
}

describe('createAuditBatcher (group commit)', () => {
  it('gathers what is appended in the same turn of the event loop into one batch', async () => {
    const s = gatedStorage();
    const batcher = createAuditBatcher(s.gated);
    const all = Array.from({ length: 10 }, (_, i) => batcher.append(issued(`j${i}`)));
    s.release();
    await Promise.all(all);
    expect(s.batches).toEqual([10]);
  });

  it('writes the appends made while a batch is written as the next batch, each awaiting its own commit', async () => {
    const s = gatedStorage();
    const batcher = createAuditBatcher(s.gated, { schedule: (run) => run() });
    const settled: string[] = [];
    const first = batcher.append(issued('j0')).then(() => settled.push('j0'));
    const rest = Array.from({ length: 9 }, (_, i) =>
      batcher.append(issued(`j${i + 1}`)).then(() => settled.push(`j${i + 1}`)),
    );
    await Promise.resolve();
    expect(settled).toEqual([]);
    s.release();
    await Promise.all([first, ...rest]);
    expect(s.batches).toEqual([1, 9]);
    const stored = await s.storage.auditEvents.list({ limit: 100 });
    expect(stored.map((e) => (e.type === 'token.issued' ? e.details.jti : ''))).toEqual(
      Array.from({ length: 10 }, (_, i) => `j${i}`),
    );
  });

  it('splits what waits into batches of maxBatch events', async () => {
    const s = gatedStorage();
    const batcher = createAuditBatcher(s.gated, { maxBatch: 4, schedule: (run) => run() });
    const all = Array.from({ length: 10 }, (_, i) => batcher.append(issued(`j${i}`)));
    s.release();
    await Promise.all(all);
    expect(s.batches).toEqual([1, 4, 4, 1]);
  });

  it('fails every append of a batch that could not be written, and none of the next batch', async () => {
    const s = gatedStorage();
    const batcher = createAuditBatcher(s.gated, { schedule: (run) => run() });
    s.failWith(new StorageUnavailableError('unreachable'));
    const failed = [batcher.append(issued('a')), batcher.append(issued('b'))].map((p) =>
      p.then(
        () => 'stored',
        (error: unknown) => (error instanceof StorageUnavailableError ? error.status : 'other'),
      ),
    );
    s.release();
    // The first batch (a) fails alone; b waited for the next one, which fails too.
    expect(await Promise.all(failed)).toEqual([503, 503]);
    s.failWith(undefined);
    await batcher.append(issued('c'));
    expect((await s.storage.auditEvents.list({ limit: 10 })).length).toBe(1);
  });

  it('answers an empty append without writing', async () => {
    const s = gatedStorage();
    await createAuditBatcher(s.gated).append([]);
    expect(s.batches).toEqual([]);
  });
});
