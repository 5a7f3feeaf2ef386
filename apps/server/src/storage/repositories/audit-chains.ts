import type {
  AuditChainBreak,
  AuditChainHead,
  AuditChainVerification,
  AuditChainWriter,
} from '@idgate/schema';
import type { Selectable } from 'kysely';
import { GENESIS_HASH, linkHash } from '../../audit/chain.js';
import type { AuditEventsTable } from '../schema.js';
import { toMs } from './columns.js';
import type { RepositoryContext } from './support.js';

// Rows read per query while verifying one writer's chain.
const PAGE = 1000;

type Row = Selectable<AuditEventsTable>;
interface Anchor {
  seq: number;
  hash: string;
}

async function anchorOf(ctx: RepositoryContext, writer: string): Promise<Anchor | null> {
  const row = await ctx.db
    .selectFrom('audit_chain_anchors')
    .select(['seq', 'hash'])
    .where('writer_id', '=', writer)
    .executeTakeFirst();
  return row === undefined ? null : { seq: Number(row.seq), hash: row.hash };
}

/**
 * Deletes events that occurred before `cutoff`, at most `limit`: unchained ones by age, chained
 * ones only from the start of each writer's chain, up to (not including) its first event at or
 * after `cutoff` — events commit slightly out of time order, and a hole in a chain would read as
 * a deletion. Per writer, the seq and hash of the last event deleted become its anchor, in the
 * same transaction, so the chain that remains starts from a known link.
 */
export async function purgeAuditChains(ctx: RepositoryContext, cutoff: Date, limit: number): Promise<number> {
  const { db } = ctx;
  const before = toMs(cutoff);
  const oldUnchained = db
    .selectFrom('audit_events')
    .select('id')
    .where('writer_id', 'is', null)
    .where('occurred_at', '<', before);
  const unchained = await db
    .deleteFrom('audit_events')
    .where(
      'id',
      'in',
      Number.isFinite(limit) ? oldUnchained.orderBy('occurred_at').orderBy('id').limit(limit) : oldUnchained,
    )
    .executeTakeFirst();
  let total = Number(unchained.numDeletedRows);
  if (total >= limit) return total;
  const writers = await db
    .selectFrom('audit_events')
    .select((eb) => ['writer_id', eb.fn.min('seq').as('lo'), eb.fn.max('seq').as('hi')])
    .where('writer_id', 'is not', null)
    .where('occurred_at', '<', before)
    .groupBy('writer_id')
    .execute();
  for (const { writer_id: writer, lo, hi } of writers) {
    if (writer === null || total >= limit) continue;
    const first = await db
      .selectFrom('audit_events')
      .select((eb) => eb.fn.min('seq').as('seq'))
      .where('writer_id', '=', writer)
      .executeTakeFirst();
    const start = Number(first?.seq);
    // The chain starts with an event that is not old yet: nothing of it may go.
    if (start < Number(lo)) continue;
    const end = Math.min(Number(hi), start + (limit - total) - 1);
    const young = await db
      .selectFrom('audit_events')
      .select((eb) => eb.fn.min('seq').as('seq'))
      .where('writer_id', '=', writer)
      .where('seq', '>=', start)
      .where('seq', '<=', end)
      .where('occurred_at', '>=', before)
      .executeTakeFirst();
    const boundary = young?.seq === null || young?.seq === undefined ? end : Number(young.seq) - 1;
    if (boundary < start) continue;
    total += await deleteChainStart(ctx, writer, boundary, before);
  }
  return total;
}

async function deleteChainStart(
  ctx: RepositoryContext,
  writer: string,
  boundary: number,
  purgedBefore: number,
): Promise<number> {
  const work = async (db: RepositoryContext['db']) => {
    const last = await db
      .selectFrom('audit_events')
      .select(['seq', 'hash'])
      .where('writer_id', '=', writer)
      .where('seq', '<=', boundary)
      .orderBy('seq', 'desc')
      .limit(1)
      .executeTakeFirst();
    if (last === undefined || last.hash === null) return 0;
    const deleted = await db
      .deleteFrom('audit_events')
      .where('writer_id', '=', writer)
      .where('seq', '<=', boundary)
      .executeTakeFirst();
    // Replicas may purge together: an anchor only ever moves forward.
    await db
      .insertInto('audit_chain_anchors')
      .values({ writer_id: writer, seq: Number(last.seq), hash: last.hash, purged_before: purgedBefore })
      .onConflict((conflict) =>
        conflict
          .column('writer_id')
          .doUpdateSet((eb) => ({
            seq: eb.ref('excluded.seq'),
            hash: eb.ref('excluded.hash'),
            purged_before: eb.ref('excluded.purged_before'),
          }))
          .where('audit_chain_anchors.seq', '<', (eb) => eb.ref('excluded.seq')),
      )
      .execute();
    return Number(deleted.numDeletedRows);
  };
  return ctx.inTransaction ? work(ctx.db) : ctx.db.transaction().execute(work);
}

/**
 * Verifies every writer's chain from its anchor (or its first link), and each recorded head.
 * Reads page by page, not in one snapshot: a purge that moves an anchor while a chain is read is
 * recognised by reading the anchor again where the chain seems to have a hole.
 */
export async function verifyAuditChains(
  ctx: RepositoryContext,
  recorded: readonly AuditChainHead[],
  now: Date,
): Promise<AuditChainVerification> {
  const { db } = ctx;
  const [eventWriters, anchorWriters, unchained] = await Promise.all([
    db.selectFrom('audit_events').select('writer_id').distinct().where('writer_id', 'is not', null).execute(),
    db.selectFrom('audit_chain_anchors').select('writer_id').execute(),
    db
      .selectFrom('audit_events')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('writer_id', 'is', null)
      .executeTakeFirst(),
  ]);
  const ids = new Set<string>();
  for (const { writer_id } of [...eventWriters, ...anchorWriters]) if (writer_id !== null) ids.add(writer_id);
  const writers: AuditChainWriter[] = [];
  for (const writer of [...ids].sort()) writers.push(await verifyWriter(ctx, writer));
  const broken = writers.flatMap((w) => (w.broken === null ? [] : [w.broken]));
  for (const head of recorded) {
    const failure = await checkRecordedHead(ctx, head);
    if (failure !== null) broken.push(failure);
  }
  const heads = writers.flatMap((w) =>
    w.head === null ? [] : [{ writer: w.writer, seq: w.head.seq, hash: w.head.hash }],
  );
  return {
    intact: broken.length === 0,
    verifiedAt: now.toISOString(),
    events: writers.reduce((sum, w) => sum + w.events, 0),
    unchained: Number(unchained?.n ?? 0),
    writers,
    broken,
    heads,
  };
}

async function verifyWriter(ctx: RepositoryContext, writer: string): Promise<AuditChainWriter> {
  let anchor = await anchorOf(ctx, writer);
  const startAnchor = anchor;
  let expectSeq = (anchor?.seq ?? 0) + 1;
  let expectPrev = anchor?.hash ?? GENESIS_HASH;
  let events = 0;
  let last: Row | undefined;
  let broken: AuditChainBreak | null = null;
  const breakAt = (row: Row, kind: AuditChainBreak['kind'], message: string): AuditChainBreak => ({
    writer,
    seq: Number(row.seq),
    eventId: row.id,
    kind,
    message,
  });
  let after = 0;
  pages: for (;;) {
    const rows = await ctx.db
      .selectFrom('audit_events')
      .selectAll()
      .where('writer_id', '=', writer)
      .where('seq', '>', after)
      .orderBy('seq')
      .limit(PAGE)
      .execute();
    for (const row of rows) {
      const seq = Number(row.seq);
      after = seq;
      if (row.hash !== linkHash(row)) {
        broken = breakAt(
          row,
          'altered',
          `event ${row.id} (seq ${seq}): its stored fields do not hash to its hash`,
        );
        break pages;
      }
      if (seq > expectSeq) {
        // A purge may have moved the anchor past what was read so far.
        anchor = await anchorOf(ctx, writer);
        if (anchor !== null && anchor.seq === seq - 1) {
          expectSeq = seq;
          expectPrev = anchor.hash;
        }
      }
      if (seq !== expectSeq) {
        broken =
          seq > expectSeq
            ? breakAt(
                row,
                'deleted',
                expectSeq === seq - 1
                  ? `event ${row.id} (seq ${seq}): the event before it (seq ${expectSeq}) is missing`
                  : `event ${row.id} (seq ${seq}): the events before it (seq ${expectSeq} to ${seq - 1}) are missing`,
              )
            : breakAt(
                row,
                'inserted',
                `event ${row.id} (seq ${seq}): stands before the point the retention purge reached (seq ${expectSeq - 1})`,
              );
        break pages;
      }
      if (row.prev_hash !== expectPrev) {
        broken = breakAt(
          row,
          'inserted',
          `event ${row.id} (seq ${seq}): does not follow the event before it (an event was inserted, replaced or moved)`,
        );
        break pages;
      }
      expectSeq = seq + 1;
      expectPrev = row.hash;
      events += 1;
      last = row;
    }
    if (rows.length < PAGE) break;
  }
  if (broken !== null) {
    // Count the whole chain even past its break.
    const n = await ctx.db
      .selectFrom('audit_events')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('writer_id', '=', writer)
      .executeTakeFirst();
    events = Number(n?.n ?? 0);
  }
  return {
    writer,
    events,
    anchor: startAnchor,
    head:
      last === undefined || broken !== null
        ? null
        : {
            seq: Number(last.seq),
            hash: last.hash ?? '',
            eventId: last.id,
            occurredAt: new Date(Number(last.occurred_at)).toISOString(),
          },
    broken,
  };
}

async function checkRecordedHead(
  ctx: RepositoryContext,
  head: AuditChainHead,
): Promise<AuditChainBreak | null> {
  const row = await ctx.db
    .selectFrom('audit_events')
    .select(['id', 'hash'])
    .where('writer_id', '=', head.writer)
    .where('seq', '=', head.seq)
    .executeTakeFirst();
  const at = { writer: head.writer, seq: head.seq };
  if (row !== undefined) {
    return row.hash === head.hash
      ? null
      : {
          ...at,
          eventId: row.id,
          kind: 'rewritten',
          message: `event ${row.id} (seq ${head.seq}): its hash is not the one recorded (the chain was recomputed)`,
        };
  }
  const anchor = await anchorOf(ctx, head.writer);
  if (anchor !== null && anchor.seq > head.seq) return null;
  if (anchor !== null && anchor.seq === head.seq)
    return anchor.hash === head.hash
      ? null
      : {
          ...at,
          eventId: null,
          kind: 'rewritten',
          message: `the purge anchor at seq ${head.seq}: its hash is not the one recorded (the chain was recomputed)`,
        };
  return {
    ...at,
    eventId: null,
    kind: 'deleted',
    message: `the recorded head (seq ${head.seq}) is not in the trail: events were deleted from the end of the chain, or the whole chain`,
  };
}
