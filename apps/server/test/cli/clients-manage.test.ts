import { ApiKey, OAuthClient, RotatedClientSecret } from '@idgate/schema';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { assertBuilt, envFor, lines, runInProcess, tempSqlite } from './support.js';

beforeAll(assertBuilt);

let db: Awaited<ReturnType<typeof tempSqlite>>;
let env: Record<string, string>;
beforeEach(async () => {
  db = await tempSqlite();
  env = envFor(db.url);
});
afterEach(async () => {
  await db.remove();
});

const cli = (args: string[]) => runInProcess(args, { env });
const json = async (args: string[]) => {
  const result = await cli(args);
  expect(result).toMatchObject({ code: 0, stderr: expect.any(String) });
  return JSON.parse(result.stdout) as unknown;
};
const WEB = [
  '--redirect-uri',
  'https://app.example.com/cb',
  '--grant',
  'authorization_code',
  'refresh_token',
];

describe('idgate clients: defaults follow grants', () => {
  it('gives a client with the refresh_token grant the offline_access scope', async () => {
    const created = OAuthClient.parse(await json(['clients', 'add', '--name', 'web', ...WEB, '--json']));
    expect(created.scopes).toEqual(['openid', 'profile', 'email', 'groups', 'offline_access']);
  });

  it.each([
    [
      ['--grant', 'refresh_token'],
      '--grant refresh_token: needs a grant that issues refresh tokens (authorization_code, password or device_code)',
    ],
    [
      ['--redirect-uri', 'https://app.example.com/cb'],
      '--redirect-uri: only used by the authorization_code grant, which --grant does not include',
    ],
    [
      ['--scope', 'openid', 'offline_access'],
      '--scope offline_access: needs the refresh_token grant in --grant',
    ],
    [
      [...WEB, '--scope', 'openid'],
      '--scope: must include offline_access for --grant refresh_token, or the client never gets a refresh token',
    ],
  ])('refuses %j: %s', async (args, message) => {
    expect(await cli(['clients', 'add', '--name', 'x', ...args])).toEqual({
      code: 1,
      stdout: '',
      stderr: `idgate: ${message}\n`,
    });
  });
});

describe('idgate clients show, update, rotate-secret and delete', () => {
  it('shows and changes a client, checking the result like a registration', async () => {
    const { clientId } = OAuthClient.parse(await json(['clients', 'add', '--name', 'web', ...WEB, '--json']));
    const shown = OAuthClient.parse(await json(['clients', 'show', clientId, '--json']));
    expect(shown.clientId).toBe(clientId);
    const human = await cli(['clients', 'show', clientId]);
    expect(lines(human.stdout)).toContain(`client_id:                 ${clientId}`);

    const changed = OAuthClient.parse(
      await json([
        'clients',
        'update',
        clientId,
        '--name',
        'web app',
        '--add-redirect-uri',
        'https://app.example.com/cb2',
        '--remove-redirect-uri',
        'https://app.example.com/cb',
        '--trusted',
        '--access-token-ttl',
        '5m',
        '--json',
      ]),
    );
    expect(changed).toMatchObject({
      name: 'web app',
      redirectUris: ['https://app.example.com/cb2'],
      trusted: true,
      accessTokenTtl: 300,
    });
    const untrusted = OAuthClient.parse(
      await json(['clients', 'update', clientId, '--no-trusted', '--json']),
    );
    expect(untrusted.trusted).toBe(false);
    // Every sign-in for it needs a second factor, and then no longer.
    const strict = await cli(['clients', 'update', clientId, '--require-mfa']);
    expect(strict.stdout).toContain('require MFA:               yes\n');
    const lax = OAuthClient.parse(await json(['clients', 'update', clientId, '--no-require-mfa', '--json']));
    expect(lax.requireMfa).toBe(false);
    // Dropping refresh_token drops offline_access with it.
    const noRefresh = OAuthClient.parse(
      await json(['clients', 'update', clientId, '--grant', 'authorization_code', '--json']),
    );
    expect(noRefresh.scopes).not.toContain('offline_access');

    expect(await cli(['clients', 'update', clientId, '--redirect-uri', 'http://app.example.com/cb'])).toEqual(
      {
        code: 1,
        stdout: '',
        stderr:
          'idgate: --redirect-uri "http://app.example.com/cb": must use https (http is allowed only for localhost, 127.0.0.1 or [::1], RFC 8252 §7.3)\n',
      },
    );
    const stale = await cli(['clients', 'update', clientId, '--name', 'x', '--if-match', shown.etag]);
    expect(stale.code).toBe(1);
    expect(stale.stderr).toMatch(/has changed since it was read/);
    const removeUnknown = await cli([
      'clients',
      'update',
      clientId,
      '--remove-redirect-uri',
      'https://nope.example',
    ]);
    expect(removeUnknown.stderr).toBe(
      `idgate: --remove-redirect-uri https://nope.example: not a redirect URI of client ${clientId}\n`,
    );
    expect(await cli(['clients', 'update', 'cl_unknown', '--name', 'x'])).toEqual({
      code: 1,
      stdout: '',
      stderr: 'idgate: no client cl_unknown\n',
    });
  });

  it('rotates a secret with a grace period, answering it once in camelCase', async () => {
    const added = (await json(['clients', 'add', '--name', 'ci', '--json'])) as Record<string, unknown>;
    expect(Object.keys(added)).not.toContain('client_secret');
    const before = Date.now();
    const rotated = RotatedClientSecret.parse(
      await json(['clients', 'rotate-secret', added.clientId as string, '--grace-period', '1h', '--json']),
    );
    expect(rotated.clientSecret).not.toBe(added.clientSecret);
    const until = Date.parse(rotated.previousSecretExpiresAt as string);
    expect(until).toBeGreaterThanOrEqual(before + 3_600_000);
    expect(until).toBeLessThanOrEqual(Date.now() + 3_600_000);
    const human = await cli(['clients', 'rotate-secret', added.clientId as string]);
    expect(human.stdout).toMatch(
      /^client_secret: \S{43} {2}\(shown only once\)\nthe previous secret no longer works\n$/,
    );
    expect(
      await cli(['clients', 'rotate-secret', added.clientId as string, '--grace-period', '31d']),
    ).toMatchObject({
      code: 1,
      stderr:
        'idgate: --grace-period 2678400: must be a whole number of seconds from 0 to 2592000 (30 days)\n',
    });
    expect(
      await cli(['clients', 'rotate-secret', added.clientId as string, '--grace-period', '1w']),
    ).toMatchObject({
      code: 1,
      stderr:
        'idgate: --grace-period "1w": must be a whole number of seconds, or a number with a unit s, m, h or d (30d)\n',
    });
  });

  it('deletes a client as a child process would, and refuses the kubectl client of a cluster', async () => {
    const { clientId } = OAuthClient.parse(await json(['clients', 'add', '--name', 'gone', '--json']));
    expect(await runInProcess(['clients', 'delete', clientId], { env })).toMatchObject({
      code: 0,
      stdout: `client ${clientId} removed (0 grants revoked)\n`,
    });
    const cluster = (await json(['clusters', 'add', 'prod', '--json'])) as {
      cluster: { kubectlClientId: string };
    };
    const refused = await cli(['clients', 'delete', cluster.cluster.kubectlClientId]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/idgate clusters remove/);
  });
});

describe('idgate api-keys --expires-in', () => {
  it('creates an expiring key and lists its expiry and last use', async () => {
    const before = Date.now();
    const created = (await json([
      'api-keys',
      'add',
      '--name',
      'ci',
      '--scope',
      'admin',
      '--expires-in',
      '30d',
      '--json',
    ])) as Record<string, unknown>;
    const expiresAt = Date.parse(ApiKey.parse({ ...created, key: undefined }).expiresAt as string);
    expect(expiresAt).toBeGreaterThanOrEqual(before + 30 * 86_400_000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 30 * 86_400_000);
    const listed = await cli(['api-keys', 'list']);
    const [header, row] = lines(listed.stdout);
    expect(header).toMatch(/LAST_USED +EXPIRES$/);
    expect(row).toMatch(/ active .* - +\d{4}-\d\d-\d\dT\S+Z$/);
    expect(
      await cli(['api-keys', 'add', '--name', 'x', '--scope', 'admin', '--expires-in', '0']),
    ).toMatchObject({
      code: 1,
      stderr:
        'idgate: --expires-in "0": must be a positive whole number of seconds, or a number with a unit s, m, h or d (30d)\n',
    });
  });
});
