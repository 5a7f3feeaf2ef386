import { CreateUserInput } from '@idgate/schema';
import { describe, expect, it } from 'vitest';
import { listApiKeys } from '../../src/admin/api-keys.js';
import { listClients } from '../../src/admin/clients.js';
import { ADMIN_GROUP, initializeStorage } from '../../src/admin/init.js';
import { createUser, listUsers } from '../../src/admin/users.js';
import { authenticateApiKey } from '../../src/api-keys/api-key.js';
import { verifySecret } from '../../src/secrets.js';
import { adminPorts, rejection } from './ports.js';

describe('initializing storage', () => {
  it('creates an admin, an API key for both scopes and a trusted CLI client, with secrets shown once', async () => {
    const ports = adminPorts();
    const { admin, apiKey, client } = await initializeStorage(ports, { adminUsername: 'root' });
    expect(admin.user).toMatchObject({ username: 'root', groups: [ADMIN_GROUP], disabled: false });
    expect(await ports.hasher.verify(admin.user.passwordHash ?? '', admin.password)).toBe(true);
    const find = (prefix: string) => ports.storage.apiKeys.findByPrefix(prefix);
    expect((await authenticateApiKey(apiKey.key, 'admin', find)).scopes).toEqual(['tokenreview', 'admin']);
    expect(client.client).toMatchObject({
      name: 'idgate-cli',
      trusted: true,
      public: false,
      accessTokenTtl: 600,
      refreshTokenTtl: 86_400,
    });
    expect(await verifySecret(client.clientSecret, client.client.secretHash ?? '')).toBe(true);
  });

  it('refuses storage that holds anything already, and changes nothing', async () => {
    const ports = adminPorts();
    await createUser(ports, CreateUserInput.parse({ username: 'someone' }));
    expect(await rejection(initializeStorage(ports, { adminUsername: 'admin' }))).toMatchObject({
      code: 'conflict',
      message: 'the database is already initialized',
    });
    expect((await listUsers(ports)).map((u) => u.username)).toEqual(['someone']);
    expect([await listApiKeys(ports), await listClients(ports)]).toEqual([[], []]);
  });

  it('is all or nothing, and refuses a second run', async () => {
    const ports = adminPorts();
    await initializeStorage(ports, { adminUsername: 'admin' });
    expect(await rejection(initializeStorage(ports, { adminUsername: 'other' }))).toMatchObject({
      code: 'conflict',
    });
    expect(await listUsers(ports)).toHaveLength(1);
  });
});
