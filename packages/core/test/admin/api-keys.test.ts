import type { ApiKeyScope, CreateApiKeyInput } from '@idgate/schema';
import { describe, expect, it } from 'vitest';
import {
  createApiKey,
  getApiKey,
  listApiKeys,
  revokeApiKey,
  updateApiKey,
} from '../../src/admin/api-keys.js';
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

  it('makes a key of its roles and scopes; an acting key gives only scopes it holds', async () => {
    const ports = adminPorts();
    const desk = await createApiKey(ports, { name: 'desk', roles: ['helpdesk'], scopes: ['audit:read'] });
    expect(desk.record.scopes).toEqual([
      'users:read',
      'users:unlock',
      'users:password',
      'sessions:read',
      'sessions:write',
      'audit:read',
    ]);
    const acting = { ...ports, actingScopes: ['api-keys:write', 'users:read', 'audit:read'] as const };
    expect((await createApiKey(acting, { name: 'reader', scopes: ['users:read'] })).record.scopes).toEqual([
      'users:read',
    ]);
    const more: Array<[Omit<CreateApiKeyInput, 'name'>, ApiKeyScope]> = [
      [{ scopes: ['users:write'] }, 'users:write'],
      [{ roles: ['helpdesk'] }, 'users:unlock'],
      [{ scopes: ['tokenreview'] }, 'tokenreview'],
      [{ roles: ['admin'] }, 'admin'],
    ];
    for (const [input, scope] of more) {
      const refused = await rejection(createApiKey(acting, { name: 'more', ...input }));
      expect(refused).toMatchObject({
        status: 403,
        problemCode: 'api_key_scope',
        scope,
        message: `the API key lacks the "${scope}" scope, which the new key would have`,
      });
    }
    // An admin key gives any scope of the admin API, and admin, but not tokenreview.
    const admin = { ...ports, actingScopes: ['admin'] as const };
    expect((await createApiKey(admin, { name: 'ops', roles: ['operator', 'admin'] })).record.scopes).toEqual([
      'admin',
    ]);
    expect(await rejection(createApiKey(admin, { name: 'k8s', scopes: ['tokenreview'] }))).toMatchObject({
      scope: 'tokenreview',
    });
    expect((await listApiKeys(ports)).map((k) => k.name).sort()).toEqual(['desk', 'ops', 'reader']);
  });

  it('reads a key by id or prefix, renames it and changes its expiry, recording each change', async () => {
    const ports = adminPorts();
    const { record } = await createApiKey(ports, { name: 'ci', scopes: ['clients:write'], expiresIn: 60 });
    expect(await getApiKey(ports, record.prefix)).toEqual(record);
    expect(await getApiKey(ports, record.id)).toEqual(record);
    expect(await rejection(getApiKey(ports, 'idg_zzzzzzzz'))).toMatchObject({
      code: 'not_found',
      message: 'no API key idg_zzzzzzzz',
    });

    const renamed = await updateApiKey(ports, record.prefix, { name: 'ci (2026)', expiresIn: 3600 });
    expect(renamed).toMatchObject({ name: 'ci (2026)', expiresAt: new Date('2026-11-21T11:00:00.000Z') });
    const never = await updateApiKey(ports, record.id, { expiresAt: null });
    expect(never.expiresAt).toBeNull();
    const at = await updateApiKey(ports, record.id, { expiresAt: '2027-01-01T00:00:00+01:00' });
    expect(at.expiresAt).toEqual(new Date('2026-12-31T23:00:00.000Z'));
    expect(await updateApiKey(ports, record.id, {})).toEqual(at);

    const changes = (await ports.storage.auditEvents.list({ limit: 10 })).flatMap((event) =>
      event.type === 'admin.changed' && event.details.action === 'updated' ? [event.details] : [],
    );
    expect(changes.map((details) => [details.before, details.after])).toEqual([
      [
        { name: 'ci', expiresAt: '2026-11-21T10:01:00.000Z' },
        { name: 'ci (2026)', expiresAt: '2026-11-21T11:00:00.000Z' },
      ],
      [{ expiresAt: '2026-11-21T11:00:00.000Z' }, { expiresAt: null }],
      [{ expiresAt: null }, { expiresAt: '2026-12-31T23:00:00.000Z' }],
    ]);

    for (const expiresAt of ['2026-11-21T10:00:00.000Z', '2037-01-01T00:00:00.000Z'])
      expect(await rejection(updateApiKey(ports, record.id, { expiresAt }))).toMatchObject({
        code: 'invalid_input',
        message: `expiresAt "${expiresAt}": must be later than now and at most ten years ahead`,
      });
    await revokeApiKey(ports, record.id);
    expect(await rejection(updateApiKey(ports, record.id, { name: 'again' }))).toMatchObject({
      code: 'not_found',
      message: `no active API key ${record.id}`,
    });
    expect((await getApiKey(ports, record.id)).name).toBe('ci (2026)');
  });

  it('lets an acting key shorten any key’s life but lengthen only that of a key whose scopes it holds', async () => {
    const ports = adminPorts();
    const { record } = await createApiKey(ports, { name: 'ops', roles: ['operator'], expiresIn: 3600 });
    const desk = { ...ports, actingScopes: ['api-keys:write', 'users:read'] as const };
    expect((await updateApiKey(desk, record.id, { name: 'ops (old)', expiresIn: 60 })).name).toBe(
      'ops (old)',
    );
    for (const change of [{ expiresIn: 120 }, { expiresAt: null }])
      expect(await rejection(updateApiKey(desk, record.id, change))).toMatchObject({
        status: 403,
        scope: 'sessions:read',
        message:
          'the API key lacks the "sessions:read" scope, which the key it would keep working longer has',
      });
    const admin = { ...ports, actingScopes: ['admin'] as const };
    expect((await updateApiKey(admin, record.id, { expiresAt: null })).expiresAt).toBeNull();
  });
});
