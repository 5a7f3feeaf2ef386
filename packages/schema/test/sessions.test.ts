import { describe, expect, it } from 'vitest';
import {
  EndedSessions,
  GrantId,
  GrantInfo,
  PageQuery,
  pageOf,
  RevokedGrants,
  SessionId,
  SessionInfo,
} from '../src/index.js';
import { rejectedAt } from './rejected-at.js';

const at = '2026-01-01T00:00:00.000Z';

const session = {
  id: '0b6f7c2e-7d1a-4c53-9d7e-2f1c4b8a9e10',
  createdAt: at,
  lastSeenAt: at,
  expiresAt: at,
  sourceAddress: '203.0.113.7',
  userAgent: 'Mozilla/5.0',
  clients: [{ clientId: 'cl_web', name: 'Web' }],
};

const grant = {
  id: '5c1e0d7a-0f4b-4e8e-bb2f-6a9d3c2e1f00',
  clientId: 'cl_web',
  clientName: null,
  scopes: ['openid', 'offline_access'],
  sessionId: null,
  createdAt: at,
  lastUsedAt: null,
  lastUsedAddress: null,
  expiresAt: at,
};

describe('admin paging', () => {
  it('reads ?limit= as a whole number from 1 to 500, 100 by default, and keeps the cursor', () => {
    expect(PageQuery.parse({})).toEqual({ limit: 100 });
    expect(PageQuery.parse({ limit: '500', cursor: 'abc' })).toEqual({ limit: 500, cursor: 'abc' });
    for (const limit of ['0', '501', '-1', '1.5', 'ten', '']) {
      expect(rejectedAt(PageQuery, { limit }), limit).toEqual(['limit']);
    }
    expect(rejectedAt(PageQuery, { cursor: '' })).toEqual(['cursor']);
    expect(rejectedAt(PageQuery, { cursor: 'c'.repeat(513) })).toEqual(['cursor']);
  });

  it('pages items with a nullable next cursor', () => {
    const Page = pageOf(GrantInfo);
    expect(Page.parse({ items: [grant], nextCursor: null })).toEqual({ items: [grant], nextCursor: null });
    expect(rejectedAt(Page, { items: [grant] })).toEqual(['nextCursor']);
    expect(rejectedAt(Page, { items: [{ ...grant, scopes: 'openid' }], nextCursor: 'x' })).toEqual([
      'items.0.scopes',
    ]);
  });
});

describe('sessions and grants', () => {
  it.each(['0b6f7c2e-7d1a-4c53-9d7e-2f1c4b8a9e10', 'g-1', 'A'.repeat(64)])('accepts the id %j', (id) => {
    expect(SessionId.parse(id)).toBe(id);
    expect(GrantId.parse(id)).toBe(id);
  });

  it.each(['', 'a_b', '../x', 'a b', 'a\u0000', 'A'.repeat(65)])('rejects the id %j', (id) => {
    expect([...new Set(rejectedAt(SessionId, id))]).toEqual(['']);
  });

  it('shows a session and a grant, never more', () => {
    expect(SessionInfo.parse({ ...session, secretHash: 'h' })).toEqual(session);
    expect(
      SessionInfo.parse({ ...session, sourceAddress: null, userAgent: null, clients: [] }),
    ).toMatchObject({
      sourceAddress: null,
    });
    expect(rejectedAt(SessionInfo, { ...session, lastSeenAt: 'yesterday' })).toEqual(['lastSeenAt']);
    expect(rejectedAt(SessionInfo, { ...session, clients: [{ clientId: 'c' }] })).toEqual(['clients.0.name']);
    expect(GrantInfo.parse(grant)).toEqual(grant);
    expect(rejectedAt(GrantInfo, { ...grant, lastUsedAt: undefined })).toEqual(['lastUsedAt']);
  });

  it('counts what ending sessions and revoking grants did', () => {
    expect(EndedSessions.parse({ ended: 2, revokedGrants: 3 })).toEqual({ ended: 2, revokedGrants: 3 });
    expect(rejectedAt(EndedSessions, { ended: -1, revokedGrants: 0 })).toEqual(['ended']);
    expect(RevokedGrants.parse({ revoked: 0 })).toEqual({ revoked: 0 });
    expect(rejectedAt(RevokedGrants, { revoked: 1.5 })).toEqual(['revoked']);
  });
});
