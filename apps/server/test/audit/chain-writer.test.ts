import { describe, expect, it } from 'vitest';
import { createAuditChainWriter, GENESIS_HASH, linkHash, type UnlinkedRow } from '../../src/audit/chain.js';

const row = (id: string): UnlinkedRow => ({
  id,
  type: 'sign-out',
  occurred_at: 1_764_190_000_000,
  actor_kind: 'cli',
  actor_id: null,
  actor_name: null,
  user_id: null,
  client_id: null,
  address: null,
  user_agent: null,
  request_id: null,
  trace_id: null,
  outcome: 'success',
  details: '{"grantsRevoked":0}',
});

describe('a process’s audit chain writer', () => {
  it('links each transaction’s rows after the last committed one, one transaction at a time', async () => {
    let made = 0;
    const writer = createAuditChainWriter(() => `w${++made}`);
    const first = await writer.link([row('a'), row('b')]);
    expect(first.rows.map((r) => [r.writer_id, r.seq])).toEqual([
      ['w1', 1],
      ['w1', 2],
    ]);
    expect(first.rows[0]?.prev_hash).toBe(GENESIS_HASH);
    expect(first.rows[1]?.prev_hash).toBe(first.rows[0]?.hash);
    for (const r of first.rows) expect(r.hash).toBe(linkHash(r));
    // The next transaction waits for the first to end.
    let linked = false;
    const second = writer.link([row('c')]).then((links) => {
      linked = true;
      return links;
    });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(linked).toBe(false);
    first.committed();
    const links = await second;
    expect(links.rows[0]).toMatchObject({ writer_id: 'w1', seq: 3, prev_hash: first.rows[1]?.hash });
    links.committed();
  });

  it('starts a new chain under a new id after a transaction ended in doubt, never a fork', async () => {
    let made = 0;
    const writer = createAuditChainWriter(() => `w${++made}`);
    (await writer.link([row('a')])).committed();
    // The commit's answer was lost: the row may or may not be stored.
    (await writer.link([row('b')])).failed();
    const next = await writer.link([row('c')]);
    expect(next.rows[0]).toMatchObject({ writer_id: 'w2', seq: 1, prev_hash: GENESIS_HASH });
    expect(writer.writerId).toBe('w2');
  });
});
