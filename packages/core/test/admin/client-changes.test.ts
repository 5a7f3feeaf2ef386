import { describe, expect, it } from 'vitest';
import { createApiKey } from '../../src/admin/api-keys.js';
import {
  createClient,
  defaultClientScopes,
  getClient,
  listClientPage,
  parseClientRegistration,
  removeClient,
  rotateClientSecret,
  updateClient,
} from '../../src/admin/clients.js';
import { addCluster } from '../../src/admin/clusters.js';
import { authenticateApiKey } from '../../src/api-keys/api-key.js';
import { authenticateClient } from '../../src/clients/authenticate.js';
import { adminPorts, rejection, thrown } from './ports.js';

const LIFETIMES = {
  accessTokenTtl: 600,
  refreshTokenTtl: 86_400,
  maxAccessTokenTtl: 3600,
  grantTtl: 604_800,
};
const WEB = { name: 'web', grantTypes: ['authorization_code'], redirectUris: ['https://app.example.com/cb'] };

describe('client defaults follow the grants', () => {
  it('gives a client with the refresh_token grant the offline_access scope', () => {
    const settings = parseClientRegistration(
      { ...WEB, grantTypes: ['authorization_code', 'refresh_token'] },
      LIFETIMES,
    );
    expect(settings.scopes).toEqual(['openid', 'profile', 'email', 'groups', 'offline_access']);
    expect(defaultClientScopes(['client_credentials'])).not.toContain('offline_access');
  });

  it.each([
    [
      { name: 'x', grantTypes: ['authorization_code'] },
      'grantTypes authorization_code needs at least one redirectUris',
    ],
    [
      { name: 'x', redirectUris: ['https://app.example.com/cb'] },
      'redirectUris: only used by the authorization_code grant, which grantTypes does not include',
    ],
    [
      { name: 'x', grantTypes: ['refresh_token'] },
      'grantTypes refresh_token: needs a grant that issues refresh tokens (authorization_code, password or device_code)',
    ],
    [
      {
        name: 'x',
        public: true,
        redirectUris: ['http://127.0.0.1/cb'],
        grantTypes: ['authorization_code', 'client_credentials'],
      },
      'grantTypes client_credentials: not allowed for a public client, which has no secret',
    ],
    [
      { ...WEB, scopes: ['openid', 'offline_access'] },
      'scopes offline_access: needs the refresh_token grant in grantTypes',
    ],
    [
      { ...WEB, grantTypes: ['authorization_code', 'refresh_token'], scopes: ['openid'] },
      'scopes: must include offline_access for grantTypes refresh_token, or the client never gets a refresh token',
    ],
    [
      { name: 'x', refreshTokenTtl: 604_801 },
      'refreshTokenTtl 604801: must be at most 604800 seconds (tokens.grantTtl)',
    ],
  ])('refuses %j', (input, message) => {
    expect(thrown(() => parseClientRegistration(input, LIFETIMES))).toMatchObject({
      code: 'invalid_input',
      message,
    });
  });
});

describe('changing a client', () => {
  it('replaces the fields given, checks the merged client, and honours If-Match', async () => {
    const ports = adminPorts({ lifetimes: LIFETIMES });
    const created = await createClient(ports, WEB);
    expect(created.clientSecret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const changed = await updateClient(
      ports,
      created.clientId,
      { grantTypes: ['authorization_code', 'refresh_token'], trusted: true },
      { ifMatch: created.etag },
    );
    // Defaults follow grants: offline_access came with refresh_token.
    expect(changed).toMatchObject({ trusted: true, scopes: [...defaultClientScopes(['refresh_token'])] });
    expect(changed.etag).not.toBe(created.etag);
    expect(await getClient(ports, created.clientId)).toEqual(changed);
    expect(
      await rejection(updateClient(ports, created.clientId, { name: 'again' }, { ifMatch: created.etag })),
    ).toMatchObject({ code: 'precondition_failed', status: 412 });
    expect(await rejection(updateClient(ports, created.clientId, { redirectUris: [] }))).toMatchObject({
      code: 'invalid_input',
      message: 'grantTypes authorization_code needs at least one redirectUris',
    });
    expect(await rejection(updateClient(ports, created.clientId, { accessTokenTtl: 3601 }))).toMatchObject({
      code: 'invalid_input',
    });
    expect(await rejection(updateClient(ports, 'cl_nope', { name: 'x' }))).toMatchObject({
      code: 'not_found',
    });
    const dropped = await updateClient(ports, created.clientId, { grantTypes: ['authorization_code'] });
    expect(dropped.scopes).not.toContain('offline_access');
  });

  it('refuses to change the kubectl client’s audiences, or to delete it while clusters exist', async () => {
    const ports = adminPorts({ lifetimes: LIFETIMES });
    const { cluster } = await addCluster(ports, { name: 'prod' });
    const id = cluster.kubectlClientId as string;
    expect(await rejection(updateClient(ports, id, { audiences: ['https://other'] }))).toMatchObject({
      code: 'read_only',
      problemCode: 'client_read_only',
      status: 409,
    });
    // Its audiences unchanged is no change; other fields may change.
    expect(
      (await updateClient(ports, id, { audiences: ['kubernetes:prod'], name: 'kubectl' })).audiences,
    ).toEqual(['kubernetes:prod']);
    expect((await rejection(removeClient(ports, id))).message).toContain('idgate clusters remove');
  });

  it('pages clients by creation time with an opaque cursor, refusing a made-up one', async () => {
    const ports = adminPorts({ lifetimes: LIFETIMES });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push((await createClient(ports, { name: `c${i}` })).clientId);
      ports.clock.advance(1);
    }
    const first = await listClientPage(ports, { limit: 2 });
    const second = await listClientPage(ports, { limit: 2, cursor: first.nextCursor as string });
    const third = await listClientPage(ports, { limit: 2, cursor: second.nextCursor as string });
    expect([...first.items, ...second.items, ...third.items].map((c) => c.clientId)).toEqual(ids);
    expect(third.nextCursor).toBeNull();
    expect(await rejection(listClientPage(ports, { limit: 2, cursor: 'bm9wZQ' }))).toMatchObject({
      code: 'invalid_input',
      message: 'cursor: not a cursor this listing answered; start over without it',
    });
  });
});

describe('rotating a client secret', () => {
  const basic = (id: string, secret: string) => ({ authorization: `Basic ${btoa(`${id}:${secret}`)}` });

  it('accepts the previous secret until the grace period ends, and the new one at once', async () => {
    const ports = adminPorts({ lifetimes: LIFETIMES });
    const { clientId, clientSecret: old } = await createClient(ports, { name: 'CI' });
    const find = (id: string) => ports.storage.clients.findById(id);
    const now = () => new Date(ports.clock.now());
    const rotated = await rotateClientSecret(ports, clientId, { gracePeriod: 3600 });
    expect(rotated.previousSecretExpiresAt).toBe('2026-11-21T11:00:00.000Z');
    await expect(
      authenticateClient(basic(clientId, rotated.clientSecret), find, now()),
    ).resolves.toBeDefined();
    await expect(authenticateClient(basic(clientId, old as string), find, now())).resolves.toBeDefined();
    ports.clock.advance(3600);
    expect(await rejection(authenticateClient(basic(clientId, old as string), find, now()))).toMatchObject({
      code: 'invalid_client',
    });
    await expect(
      authenticateClient(basic(clientId, rotated.clientSecret), find, now()),
    ).resolves.toBeDefined();
  });

  it('ends the previous secret at once by default, and refuses a public client', async () => {
    const ports = adminPorts({ lifetimes: LIFETIMES });
    const { clientId, clientSecret: old } = await createClient(ports, { name: 'CI' });
    const rotated = await rotateClientSecret(ports, clientId, {});
    expect(rotated.previousSecretExpiresAt).toBeNull();
    const find = (id: string) => ports.storage.clients.findById(id);
    expect(
      await rejection(authenticateClient(basic(clientId, old as string), find, new Date(ports.clock.now()))),
    ).toMatchObject({ code: 'invalid_client' });
    const app = await createClient(ports, {
      name: 'app',
      public: true,
      redirectUris: ['http://127.0.0.1/cb'],
    });
    expect(await rejection(rotateClientSecret(ports, app.clientId, {}))).toMatchObject({
      code: 'invalid_input',
    });
    expect(await rejection(rotateClientSecret(ports, clientId, { gracePeriod: 2_592_001 }))).toMatchObject({
      code: 'invalid_input',
    });
  });
});

describe('API key expiry', () => {
  it('refuses a key from its expiry on, like an unknown one', async () => {
    const ports = adminPorts();
    const { record, key } = await createApiKey(ports, { name: 'ci', scopes: ['admin'], expiresIn: 60 });
    expect(record.expiresAt?.toISOString()).toBe('2026-11-21T10:01:00.000Z');
    const find = (prefix: string) => ports.storage.apiKeys.findByPrefix(prefix);
    await expect(authenticateApiKey(key, 'admin', find, new Date(ports.clock.now()))).resolves.toBeDefined();
    ports.clock.advance(60);
    expect(
      await rejection(authenticateApiKey(key, 'admin', find, new Date(ports.clock.now()))),
    ).toMatchObject({
      code: 'invalid',
      status: 401,
      message: 'the API key is not valid',
    });
  });
});
