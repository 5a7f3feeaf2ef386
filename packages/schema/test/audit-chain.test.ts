import { describe, expect, it } from 'vitest';
import {
  AuditChainBreak,
  AuditChainBreakKind,
  AuditChainHead,
  AuditChainVerification,
  AuditChainVerifyRequest,
  AuditChainWriter,
} from '../src/index.js';

const hash = 'a'.repeat(64);
const head = { writer: '01JD3X0000000000000000000W', seq: 42, hash };
const broken = {
  writer: head.writer,
  seq: 7,
  eventId: '01JD3X00000000000000000007',
  kind: 'altered',
  message: 'm',
};

describe('the audit chain verification', () => {
  it('takes recorded heads: a writer, a seq from 1 and a SHA-256 in lowercase hex', () => {
    expect(AuditChainHead.parse(head)).toEqual(head);
    expect(AuditChainVerifyRequest.parse({})).toEqual({});
    expect(AuditChainVerifyRequest.parse({ heads: [head] })).toEqual({ heads: [head] });
    for (const bad of [
      { ...head, hash: hash.toUpperCase() },
      { ...head, hash: 'ab' },
      { ...head, seq: 0 },
      { ...head, seq: 1.5 },
      { ...head, writer: '' },
      { ...head, writer: 'w'.repeat(129) },
    ])
      expect(AuditChainHead.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
    expect(AuditChainVerifyRequest.safeParse({ heads: Array(10_001).fill(head) }).success).toBe(false);
  });

  it('names a break by writer, seq, event and kind', () => {
    expect(AuditChainBreak.parse(broken)).toEqual(broken);
    expect(AuditChainBreak.parse({ ...broken, eventId: null, kind: 'deleted' }).eventId).toBeNull();
    expect(AuditChainBreakKind.options).toEqual(['altered', 'deleted', 'inserted', 'rewritten']);
    expect(AuditChainBreakKind.safeParse('reordered').success).toBe(false);
  });

  it('reports each writer and the whole verification', () => {
    const writer = {
      writer: head.writer,
      events: 3,
      anchor: { seq: 39, hash },
      head: { seq: 42, hash, eventId: 'e', occurredAt: '2026-01-01T00:00:00.000Z' },
      broken: null,
    };
    expect(AuditChainWriter.parse(writer)).toEqual(writer);
    expect(
      AuditChainWriter.safeParse({ ...writer, head: { ...writer.head, occurredAt: 'yesterday' } }).success,
    ).toBe(false);
    const result = {
      intact: false,
      verifiedAt: '2026-01-01T00:00:00.000Z',
      events: 3,
      unchained: 0,
      writers: [writer],
      broken: [broken],
      heads: [head],
    };
    expect(AuditChainVerification.parse(result)).toEqual(result);
    expect(AuditChainVerification.safeParse({ ...result, intact: 'no' }).success).toBe(false);
  });
});
