import type { AdminPorts } from '@idgate/core/admin';
import { describe, expect, it } from 'vitest';
import { actingAdminPorts } from '../../src/admin-ports.js';

// The ports an admin request acts through are made once per API key and kept, a bounded number of
// them; the actor of each is its key, however many keys come and go.
describe('actingAdminPorts', () => {
  const base = { lifetimes: { accessTokenTtl: 1, refreshTokenTtl: 1, maxAccessTokenTtl: 1 } } as AdminPorts;
  const key = (n: number) => ({ id: `k${n}`, prefix: `idg_${n}`, scopes: ['users:read' as const] });

  it('acts for the key: its id and prefix are the actor, its scopes what it may give, the rest is the server’s ports', () => {
    const acting = actingAdminPorts(base)(key(1));
    expect(acting.auditActor?.()).toEqual({ kind: 'api-key', id: 'k1', name: 'idg_1' });
    expect(acting.actingScopes).toEqual(['users:read']);
    expect(base.actingScopes).toBeUndefined();
    expect(acting.lifetimes).toBe(base.lifetimes);
    expect(base.auditActor).toBeUndefined();
  });

  it('answers the same ports for the same key, and keeps only the most recently used keys', () => {
    const actingFor = actingAdminPorts(base, 2);
    const first = actingFor(key(1));
    expect(actingFor(key(1))).toBe(first);
    const second = actingFor(key(2));
    expect(actingFor(key(1))).toBe(first); // key 1 used again: key 2 is now the oldest
    actingFor(key(3));
    expect(actingFor(key(1))).toBe(first);
    const again = actingFor(key(2));
    expect(again).not.toBe(second);
    expect(again.auditActor?.()).toEqual({ kind: 'api-key', id: 'k2', name: 'idg_2' });
  });
});
