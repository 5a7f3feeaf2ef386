import { StorageConflictError } from '@idgate/core';
import { describe, expect, it } from 'vitest';
import { testDatabaseUrls } from '../helpers/databases.js';
import { at, newClient, useStorage } from './fixtures.js';

describe.each(testDatabaseUrls())('clients on $name', (kind) => {
  const fixture = useStorage(kind);

  it('creates a client and reads it back exactly', async () => {
    const { storage } = fixture();
    const client = newClient();
    expect(await storage.clients.create(client)).toStrictEqual(client);
    expect(await storage.clients.findById('ci')).toStrictEqual(client);
  });

  it('round-trips a public, untrusted client with empty lists', async () => {
    const { storage } = fixture();
    const client = newClient({
      clientId: 'spa',
      secretHash: null,
      public: true,
      trusted: false,
      redirectUris: [],
      postLogoutRedirectUris: [],
      grantTypes: ['authorization_code'],
      scopes: [],
      audiences: [],
    });
    await storage.clients.create(client);
    expect(await storage.clients.findById('spa')).toStrictEqual(client);
  });

  it('rejects a duplicate client id with a clientId conflict', async () => {
    const { storage } = fixture();
    await storage.clients.create(newClient());
    const attempt = storage.clients.create(newClient({ name: 'another' }));
    await expect(attempt).rejects.toBeInstanceOf(StorageConflictError);
    await expect(attempt).rejects.toMatchObject({ field: 'clientId' });
    expect((await storage.clients.findById('ci'))?.name).toBe('CI pipeline');
  });

  it('treats client ids as case-sensitive', async () => {
    const { storage } = fixture();
    await storage.clients.create(newClient());
    await storage.clients.create(newClient({ clientId: 'CI' }));
    expect(await storage.clients.count()).toBe(2);
  });

  it('lists clients by creation time', async () => {
    const { storage } = fixture();
    await storage.clients.create(newClient({ clientId: 'b', createdAt: at('2026-01-03T00:00:00Z') }));
    await storage.clients.create(newClient({ clientId: 'c', createdAt: at('2026-01-01T00:00:00Z') }));
    await storage.clients.create(newClient({ clientId: 'a', createdAt: at('2026-01-02T00:00:00Z') }));
    expect((await storage.clients.list()).map((c) => c.clientId)).toEqual(['c', 'a', 'b']);
  });

  it('removes a client and reports whether there was one', async () => {
    const { storage } = fixture();
    await storage.clients.create(newClient());
    await storage.clients.create(newClient({ clientId: 'other' }));
    expect(await storage.clients.remove('ci')).toBe(true);
    expect(await storage.clients.remove('ci')).toBe(false);
    expect(await storage.clients.remove('missing')).toBe(false);
    expect(await storage.clients.findById('ci')).toBeUndefined();
    expect(await storage.clients.count()).toBe(1);
  });
});
