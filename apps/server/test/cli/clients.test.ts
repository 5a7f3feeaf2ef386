import { existsSync } from 'node:fs';
import { startDeviceAuthorization, verifySecret } from '@idgate/core';
import { DEVICE_CODE_GRANT_TYPE, OAuthClient } from '@idgate/schema';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { assertBuilt, envFor, openTestServices, runInProcess, tempSqlite } from './support.js';

beforeAll(assertBuilt);

const CLIENT_KEYS = Object.keys(OAuthClient.shape).sort();

let db: Awaited<ReturnType<typeof tempSqlite>>;
let env: Record<string, string>;
beforeEach(async () => {
  db = await tempSqlite();
  env = envFor(db.url);
});
afterEach(async () => {
  await db.remove();
});

describe('idgate clients add validation', () => {
  // No database yet: each refusal must come before one is opened.
  beforeEach(async () => {
    await db.remove();
    db = await tempSqlite({ fresh: true });
    env = envFor(db.url);
  });
  const add = ['clients', 'add', '--name', 'app'];
  it.each([
    [[...add, '--public'], '--grant authorization_code needs at least one --redirect-uri'],
    [
      [...add, '--grant', 'authorization_code'],
      '--grant authorization_code needs at least one --redirect-uri',
    ],
    [
      [...add, '--redirect-uri', 'http://app.example.com/cb', '--grant', 'authorization_code'],
      '--redirect-uri "http://app.example.com/cb": must use https (http is allowed only for localhost, 127.0.0.1 or [::1], RFC 8252 §7.3)',
    ],
    [
      [...add, '--redirect-uri', 'https://app.example.com/cb#top'],
      '--redirect-uri "https://app.example.com/cb#top": must not have a fragment (RFC 6749 §3.1.2)',
    ],
    [[...add, '--redirect-uri', '/cb'], '--redirect-uri "/cb": must be an absolute URL'],
    [
      [...add, '--post-logout-redirect-uri', 'http://app.example.com/bye'],
      '--post-logout-redirect-uri "http://app.example.com/bye": must use https (http is allowed only for localhost, 127.0.0.1 or [::1], RFC 8252 §7.3)',
    ],
    [
      [...add, '--post-logout-redirect-uri', 'https://app.example.com/bye#x'],
      '--post-logout-redirect-uri "https://app.example.com/bye#x": must not have a fragment (RFC 6749 §3.1.2)',
    ],
    [
      [...add, '--redirect-uri', 'myapp:/cb'],
      '--redirect-uri "myapp:/cb": must use https (http is allowed only for localhost, 127.0.0.1 or [::1], RFC 8252 §7.3)',
    ],
    [
      [...add, '--public', '--grant', 'client_credentials'],
      '--grant client_credentials: not allowed for a --public client, which has no secret',
    ],
    [
      [...add, '--public', '--trusted', '--grant', 'password'],
      '--grant password: not allowed for a --public client, which has no secret',
    ],
    [[...add, '--grant', 'password'], '--grant password: allowed only for a --trusted client'],
    [
      [...add, '--grant', 'implicit'],
      '--grant "implicit": Invalid option: expected one of "authorization_code"|"refresh_token"|"client_credentials"|"password"|"urn:ietf:params:oauth:grant-type:device_code"|"urn:ietf:params:oauth:grant-type:token-exchange"',
    ],
    [[...add, '--scope', 'open"id'], '--scope "open\\"id": not a valid scope (RFC 6749 §3.3)'],
    [
      [...add, '--access-token-ttl', '0'],
      '--access-token-ttl "0": must be a positive whole number of seconds, or a number with a unit s, m, h or d (30d)',
    ],
    [
      [...add, '--access-token-ttl', '1.5'],
      '--access-token-ttl "1.5": must be a positive whole number of seconds, or a number with a unit s, m, h or d (30d)',
    ],
    [
      [...add, '--access-token-ttl', '86401'],
      '--access-token-ttl 86401: must be at most 86400 seconds (tokens.maxAccessTokenTtl)',
    ],
    [['clients', 'add', '--name', ''], '--name: must not be empty'],
  ])('%j → %s', async (args, message) => {
    const result = await runInProcess(args, { env });
    expect(result).toEqual({ code: 1, stdout: '', stderr: `idgate: ${message}\n` });
    // Refused before the database was opened.
    expect(existsSync(db.file)).toBe(false);
  });

  it('refuses the same way as a child process, and a missing --name as a usage error', async () => {
    const result = await runInProcess(
      ['clients', 'add', '--name', 'app', '--public', '--grant', 'client_credentials'],
      { env },
    );
    expect(result).toMatchObject({
      code: 1,
      stdout: '',
      stderr: 'idgate: --grant client_credentials: not allowed for a --public client, which has no secret\n',
    });
    const missing = await runInProcess(['clients', 'add'], { env });
    expect(missing.code).not.toBe(0);
    expect(missing.code).not.toBe(1);
    expect(missing.stderr).toBe("idgate: required option '--name <name>' not specified\n");
    expect(existsSync(db.file)).toBe(false);
  });
});

describe('idgate clients', () => {
  it('adds a confidential client, shows its secret once, stores only a hash, and never lists a secret', async () => {
    const result = await runInProcess(
      [
        'clients',
        'add',
        '--name',
        'ci',
        '--audience',
        'https://api.example.com',
        '--access-token-ttl',
        '600',
        '--json',
      ],
      { env },
    );
    expect(result.code).toBe(0);
    const printed = JSON.parse(result.stdout) as Record<string, unknown>;
    // One spelling: camelCase only.
    expect(Object.keys(printed).sort()).toEqual([...CLIENT_KEYS, 'clientSecret'].sort());
    const { clientSecret: client_secret, ...view } = printed as { clientId: string; clientSecret: string };
    const client_id = view.clientId;
    expect(OAuthClient.parse(view)).toMatchObject({
      clientId: client_id,
      name: 'ci',
      public: false,
      trusted: false,
      redirectUris: [],
      postLogoutRedirectUris: [],
      grantTypes: ['client_credentials'],
      scopes: ['openid', 'profile', 'email', 'groups'],
      audiences: ['https://api.example.com'],
      accessTokenTtl: 600,
      refreshTokenTtl: 2_592_000,
    });
    expect(client_id).toMatch(/^cl_[a-z2-7]{16}$/);

    const services = await openTestServices(db.url);
    let secretHash: string | null | undefined;
    try {
      secretHash = (await services.storage.clients.findById(client_id))?.secretHash;
    } finally {
      await services.close();
    }
    expect(secretHash).toBeTypeOf('string');
    expect(secretHash).not.toBe(client_secret);
    expect(await verifySecret(client_secret, secretHash ?? '')).toBe(true);

    const listed = await runInProcess(['clients', 'list', '--json'], { env });
    const human = await runInProcess(['clients', 'list'], { env });
    expect(listed.code).toBe(0);
    expect(human.code).toBe(0);
    const clients = JSON.parse(listed.stdout) as Record<string, unknown>[];
    expect(clients).toHaveLength(1);
    expect(Object.keys(clients[0] ?? {}).sort()).toEqual(CLIENT_KEYS);
    for (const output of [listed.stdout, human.stdout]) {
      expect(output).toContain(client_id);
      expect(output).not.toContain(client_secret);
      expect(output).not.toContain(secretHash);
    }
  });

  it('adds a public device-flow client (RFC 8628) that starts a device authorization without a secret', async () => {
    const result = await runInProcess(
      [
        'clients',
        'add',
        '--name',
        'kubectl',
        '--public',
        '--grant',
        DEVICE_CODE_GRANT_TYPE,
        'refresh_token',
        '--scope',
        'openid',
        'offline_access',
        '--json',
      ],
      { env },
    );
    expect(result.code).toBe(0);
    const printed = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(printed).not.toHaveProperty('clientSecret');
    expect(printed).toMatchObject({
      public: true,
      redirectUris: [],
      grantTypes: [DEVICE_CODE_GRANT_TYPE, 'refresh_token'],
      scopes: ['openid', 'offline_access'],
    });
    const services = await openTestServices(db.url);
    try {
      const started = await startDeviceAuthorization({ client_id: printed.clientId as string }, undefined, {
        clock: services.clock,
        findClient: (id) => services.storage.clients.findById(id),
        storage: services.storage,
        verificationUri: 'http://localhost:8080/oauth/device',
      });
      expect(started.user_code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    } finally {
      await services.close();
    }
  });

  it('adds a public client with loopback redirect URIs and no secret', async () => {
    const uris = [
      'http://127.0.0.1:8400/cb',
      'http://[::1]/cb',
      'http://localhost/cb',
      'https://app.example.com/cb?x=1',
    ];
    const logoutUris = ['https://app.example.com/bye', 'http://127.0.0.1:8400/bye'];
    // The option repeats, and a URI given twice is kept once.
    const logout = ['--post-logout-redirect-uri', ...logoutUris, '--post-logout-redirect-uri', ...logoutUris];
    const args = [
      'clients',
      'add',
      '--name',
      'cli',
      '--public',
      '--json',
      '--redirect-uri',
      ...uris,
      ...logout,
    ];
    const result = await runInProcess([...args, '--scope', 'openid', '--scope', 'offline_access'], { env });
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    const printed = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(Object.keys(printed).sort()).toEqual(CLIENT_KEYS);
    expect(printed).toMatchObject({
      public: true,
      redirectUris: uris,
      postLogoutRedirectUris: logoutUris,
      grantTypes: ['authorization_code', 'refresh_token'],
      scopes: ['openid', 'offline_access'],
      accessTokenTtl: 3600,
    });
    const human = await runInProcess(
      ['clients', 'add', '--name', 'spa', '--public', '--redirect-uri', 'https://spa.example.com/'],
      {
        env,
      },
    );
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^created public client spa\nclient_id: +cl_[a-z2-7]{16}\n$/);
  });

  it('adds a trusted client with the password grant', async () => {
    const result = await runInProcess(
      ['clients', 'add', '--name', 't', '--trusted', '--grant', 'password', 'client_credentials'],
      {
        env,
      },
    );
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      /^created confidential client t\nclient_id: +(cl_\S+)\nclient_secret: +\S{43} {2}\(shown only once\)\n$/,
    );
    const listed = z
      .array(OAuthClient)
      .parse(JSON.parse((await runInProcess(['clients', 'list', '--json'], { env })).stdout));
    expect(listed.map((c) => [c.trusted, c.grantTypes])).toEqual([
      [true, ['password', 'client_credentials']],
    ]);
  });

  it('removes a client; an unknown one fails with one line', async () => {
    const { clientId: client_id } = JSON.parse(
      (await runInProcess(['clients', 'add', '--name', 'x', '--json'], { env })).stdout,
    );
    const removed = await runInProcess(['clients', 'remove', client_id], { env });
    expect(removed).toMatchObject({
      code: 0,
      stdout: `client ${client_id} removed (0 grants revoked)\n`,
      stderr: '',
    });
    expect(JSON.parse((await runInProcess(['clients', 'list', '--json'], { env })).stdout)).toEqual([]);
    const again = await runInProcess(['clients', 'remove', client_id], { env });
    expect(again).toMatchObject({ code: 1, stdout: '', stderr: `idgate: no client ${client_id}\n` });
  });
});
