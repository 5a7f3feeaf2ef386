import { describe, expect, it } from 'vitest';
import { createApiKey, listApiKeys, revokeApiKey } from '../../src/admin/api-keys.js';
import { apiKeyView } from '../../src/admin/views.js';
import { authenticateApiKey } from '../../src/api-keys/api-key.js';
import { adminPorts, rejection } from './ports.js';

describe('API key administration', () => {
  it('creates a key shown once, stores its prefix and hash, and lists it without either secret', async () => {
    const ports = adminPorts();
    const { record, key } = await createApiKey(ports, { name: 'apiserver', scopes: ['tokenreview'] });
    expect(key.startsWith(`${record.prefix}_`)).toBe(true);
    const find = (prefix: string) => ports.storage.apiKeys.findByPrefix(prefix);
    expect((await authenticateApiKey(key, 'tokenreview', find)).id).toBe(record.id);
    const listed = (await listApiKeys(ports)).map(apiKeyView);
    expect(listed).toEqual([
      {
        id: record.id,
        name: 'apiserver',
        prefix: record.prefix,
        scopes: ['tokenreview'],
        cluster: null,
        createdAt: '2026-11-21T10:00:00.000Z',
        lastUsedAt: null,
        expiresAt: null,
        revokedAt: null,
      },
    ]);
    expect(JSON.stringify(listed)).not.toContain(record.hash);
  });

  it('revokes by id or prefix, once, at the clock time; the key then no longer authenticates', async () => {
    const ports = adminPorts();
    const first = await createApiKey(ports, { name: 'a', scopes: ['admin'] });
    const second = await createApiKey(ports, { name: 'b', scopes: ['admin'] });
    ports.clock.advance(30);
    await revokeApiKey(ports, first.record.prefix);
    await revokeApiKey(ports, second.record.id);
    const listed = (await listApiKeys(ports)).map(apiKeyView);
    expect(listed.map((k) => k.revokedAt)).toEqual(['2026-11-21T10:00:30.000Z', '2026-11-21T10:00:30.000Z']);
    const find = (prefix: string) => ports.storage.apiKeys.findByPrefix(prefix);
    await expect(authenticateApiKey(first.key, 'admin', find)).rejects.toMatchObject({
      code: 'invalid',
      problemCode: 'api_key_invalid',
    });
    expect(await rejection(revokeApiKey(ports, first.record.id))).toMatchObject({
      code: 'not_found',
      object: 'api_key',
      message: `no active API key ${first.record.id}`,
    });
    expect(await rejection(revokeApiKey(ports, 'idg_zzzzzzzz'))).toMatchObject({ code: 'not_found' });
  });
});
