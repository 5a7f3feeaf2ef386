import { describe, expect, it } from 'vitest';
import { listSigningKeys, rotateSigningKeys } from '../../src/admin/signing-keys.js';
import { ensureSigningKey } from '../../src/keys/rotation.js';
import type { Storage } from '../../src/ports/storage.js';
import { adminPorts } from './ports.js';

describe('signing key administration', () => {
  it('lists keys newest first with their state, never private material', async () => {
    const ports = adminPorts();
    await ensureSigningKey(ports.storage.signingKeys, ports.keyPolicy, new Date(ports.clock.now()));
    const [key, ...others] = await listSigningKeys(ports);
    expect(others).toEqual([]);
    expect(key).toMatchObject({ alg: 'ES256', state: 'active', retiredAt: null, publishedUntil: null });
    expect(Object.keys(key ?? {}).sort()).toEqual([
      'alg',
      'createdAt',
      'kid',
      'publishedUntil',
      'retiredAt',
      'state',
    ]);
  });

  it('rotates: the new key is active, the old one retired and published until its tokens expired', async () => {
    const ports = adminPorts();
    await ensureSigningKey(ports.storage.signingKeys, ports.keyPolicy, new Date(ports.clock.now()));
    const [first] = await listSigningKeys(ports);
    ports.clock.advance(60);
    const { created, retired } = await rotateSigningKeys(ports);
    expect(retired).toEqual([first?.kid]);
    expect(created).toMatchObject({ state: 'active', createdAt: '2026-11-21T10:01:00.000Z' });
    const listed = await listSigningKeys(ports);
    expect(listed.map((k) => [k.kid, k.state])).toEqual([
      [created.kid, 'active'],
      [first?.kid, 'retired'],
    ]);
    expect(listed[1]?.publishedUntil).toBe('2026-11-21T11:01:00.000Z');
    ports.clock.advance(3600);
    expect((await listSigningKeys(ports)).map((k) => k.state)).toEqual(['active', 'expired']);
  });

  it('runs the rotation under the lock it is given', async () => {
    const locked: string[] = [];
    const ports = adminPorts();
    const lockSigningKeys = <T>(work: (storage: Storage) => Promise<T>) => {
      locked.push('rotation');
      return ports.storage.transaction(work);
    };
    const { retired } = await rotateSigningKeys({ ...ports, lockSigningKeys });
    expect([locked, retired]).toEqual([['rotation'], []]);
  });
});
