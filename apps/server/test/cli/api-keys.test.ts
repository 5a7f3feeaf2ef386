import { ApiKeyError, authenticateApiKey } from '@idgate/core';
import { API_KEY_ROLES, ApiKey, type ApiKeyScope } from '@idgate/schema';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { TestDatabase } from '../helpers/databases.js';
import { assertBuilt, cliDatabaseUrls, envFor, openTestServices, runInProcess } from './support.js';

beforeAll(assertBuilt);

const API_KEY_KEYS = Object.keys(ApiKey.shape).sort();

describe.each(cliDatabaseUrls())('idgate api-keys on $name', ({ create }) => {
  let database: TestDatabase;
  let env: Record<string, string>;
  beforeEach(async () => {
    database = await create();
    env = envFor(database.url);
    expect((await runInProcess(['migrate'], { env })).code).toBe(0);
  });
  afterEach(async () => {
    await database.drop();
  });

  /** How the key fares against `scope`: 'ok' or the ApiKeyError failure. */
  async function check(key: string, scope: ApiKeyScope): Promise<string> {
    const services = await openTestServices(database.url);
    try {
      await authenticateApiKey(key, scope, (prefix) => services.storage.apiKeys.findByPrefix(prefix));
      return 'ok';
    } catch (error) {
      if (error instanceof ApiKeyError) return error.code;
      throw error;
    } finally {
      await services.close();
    }
  }

  it('adds a key, printing it once as the ApiKey shape plus key, and the key works for its scopes only', async () => {
    const result = await runInProcess(
      ['api-keys', 'add', '--name', 'apiserver', '--scope', 'tokenreview', '--json'],
      {
        env,
      },
    );
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    const printed = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(Object.keys(printed).sort()).toEqual([...API_KEY_KEYS, 'key'].sort());
    const { key, ...view } = printed as { key: string };
    expect(ApiKey.parse(view)).toMatchObject({
      name: 'apiserver',
      scopes: ['tokenreview'],
      lastUsedAt: null,
      revokedAt: null,
    });
    expect(key).toMatch(/^idg_[a-z2-7]{8}_[A-Za-z0-9_-]{43}$/);
    expect(key.startsWith(`${(view as { prefix: string }).prefix}_`)).toBe(true);
    expect(await check(key, 'tokenreview')).toBe('ok');
    expect(await check(key, 'admin')).toBe('forbidden');

    const both = await runInProcess(
      ['api-keys', 'add', '--name', 'ops', '--scope', 'admin', '--scope', 'tokenreview'],
      { env },
    );
    expect(both.code).toBe(0);
    const shown = /^key: (idg_\S+) {2}\(shown only once\)$/m.exec(both.stdout)?.[1];
    expect(shown).toBeDefined();
    expect(await check(shown ?? '', 'admin')).toBe('ok');

    const listed = await runInProcess(['api-keys', 'list', '--json'], { env });
    expect(listed.code).toBe(0);
    const keys = z.array(ApiKey).parse(JSON.parse(listed.stdout));
    expect(keys.map((k) => [k.name, k.scopes])).toEqual([
      ['apiserver', ['tokenreview']],
      ['ops', ['tokenreview', 'admin']],
    ]);
    for (const entry of JSON.parse(listed.stdout) as object[])
      expect(Object.keys(entry).sort()).toEqual(API_KEY_KEYS);
    const human = await runInProcess(['api-keys', 'list'], { env });
    for (const output of [listed.stdout, human.stdout]) {
      expect(output).not.toContain(key);
      expect(output).not.toContain(key.slice(13));
      expect(output).not.toContain(shown?.slice(13));
    }
  });

  it('refuses a missing, unknown or absent scope or role and a missing, twice given or empty name', async () => {
    const unknown = await runInProcess(['api-keys', 'add', '--name', 'x', '--scope', 'root'], { env });
    expect(unknown.code).toBe(1);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr).toMatch(
      /^idgate: --scope "root": .*"tokenreview"\|"admin"\|"users:read"\|.*"audit:read"(\|"[a-z:-]+")*\n$/,
    );
    const role = await runInProcess(['api-keys', 'add', 'x', '--role', 'root'], { env });
    expect(role.stderr).toMatch(/^idgate: --role "root": .*"auditor"\|"helpdesk"\|"operator"\|"admin"\n$/);
    const missing = await runInProcess(['api-keys', 'add', '--name', 'x'], { env });
    expect(missing).toMatchObject({ code: 1, stderr: 'idgate: --scope: give at least one scope or role\n' });
    const empty = await runInProcess(['api-keys', 'add', '--name', ' ', '--scope', 'admin'], { env });
    expect(empty).toMatchObject({ code: 1, stdout: '', stderr: 'idgate: --name: must not be empty\n' });
    const emptyArgument = await runInProcess(['api-keys', 'add', ' ', '--scope', 'admin'], { env });
    expect(emptyArgument).toMatchObject({ code: 1, stderr: 'idgate: NAME: must not be empty\n' });
    const unnamed = await runInProcess(['api-keys', 'add', '--scope', 'admin'], { env });
    expect(unnamed).toMatchObject({
      code: 1,
      stderr: 'idgate: give the key a name: idgate api-keys add NAME --scope S\n',
    });
    const twice = await runInProcess(['api-keys', 'add', 'a', '--name', 'b', '--scope', 'admin'], { env });
    expect(twice).toMatchObject({ code: 1, stderr: 'idgate: give the name once: as NAME or as --name\n' });
    const listed = await runInProcess(['api-keys', 'list', '--json'], { env });
    expect(JSON.parse(listed.stdout)).toEqual([]);
  });

  it('adds a key NAME of scopes and roles, which works for those scopes only', async () => {
    const added = await runInProcess(
      [
        'api-keys',
        'add',
        'desk',
        '--role',
        'helpdesk',
        '--scope',
        'audit:read',
        '--scope',
        'tokenreview',
        '--json',
      ],
      { env },
    );
    expect(added).toMatchObject({ code: 0, stderr: '' });
    const { key, ...view } = JSON.parse(added.stdout) as { key: string; name: string; scopes: string[] };
    expect(view).toMatchObject({ name: 'desk' });
    expect(view.scopes).toEqual(['tokenreview', ...API_KEY_ROLES.helpdesk, 'audit:read']);
    for (const scope of ['tokenreview', 'users:unlock', 'sessions:write', 'audit:read'] as const)
      expect(await check(key, scope)).toBe('ok');
    for (const scope of ['users:write', 'clients:read', 'admin'] as const)
      expect(await check(key, scope)).toBe('forbidden');

    const admin = JSON.parse(
      (
        await runInProcess(['api-keys', 'add', 'root', '--role', 'admin', '--role', 'auditor', '--json'], {
          env,
        })
      ).stdout,
    ) as { key: string; scopes: string[] };
    expect(admin.scopes).toEqual(['admin']);
    expect(await check(admin.key, 'keys:rotate')).toBe('ok');
    expect(await check(admin.key, 'tokenreview')).toBe('forbidden');
  });

  it('shows a key and renames it or changes its expiry; the scopes stay', async () => {
    const { id, prefix, key } = JSON.parse(
      (
        await runInProcess(
          ['api-keys', 'add', 'ci', '--scope', 'clients:read', '--expires-in', '1h', '--json'],
          {
            env,
          },
        )
      ).stdout,
    ) as { id: string; prefix: string; key: string };
    const shown = await runInProcess(['api-keys', 'show', prefix], { env });
    expect(shown).toMatchObject({ code: 0, stderr: '' });
    expect(shown.stdout).toMatch(
      new RegExp(
        `^id: +${id}\nprefix: +${prefix}\nname: +ci\nscopes: +clients:read\ncluster: +-\nstatus: +active\n`,
      ),
    );
    expect(shown.stdout).toMatch(/^expires: +\d{4}-\d\d-\d\dT/m);
    expect(shown.stdout).not.toContain(key.slice(13));

    const renamed = await runInProcess(
      ['api-keys', 'update', id, '--name', 'ci (2026)', '--expires-in', '30d'],
      {
        env,
      },
    );
    expect(renamed).toMatchObject({ code: 0, stderr: '' });
    expect(renamed.stdout).toMatch(new RegExp(`^API key ${prefix} updated\nid: +${id}\n`));
    expect(renamed.stdout).toMatch(/^name: +ci \(2026\)$/m);
    const json = ApiKey.parse(
      JSON.parse((await runInProcess(['api-keys', 'show', id, '--json'], { env })).stdout),
    );
    expect(json).toMatchObject({ name: 'ci (2026)', scopes: ['clients:read'] });
    expect(Date.parse(json.expiresAt as string) - Date.now()).toBeGreaterThan(29 * 86_400_000);

    const never = await runInProcess(['api-keys', 'update', prefix, '--no-expiry', '--json'], { env });
    expect(ApiKey.parse(JSON.parse(never.stdout))).toMatchObject({ expiresAt: null, name: 'ci (2026)' });
    const at = await runInProcess(
      ['api-keys', 'update', prefix, '--expires-at', '2030-01-01T00:00:00Z', '--json'],
      {
        env,
      },
    );
    expect(JSON.parse(at.stdout)).toMatchObject({ expiresAt: '2030-01-01T00:00:00.000Z' });
    expect(await check(key, 'clients:read')).toBe('ok');

    const both = await runInProcess(['api-keys', 'update', id, '--expires-in', '1h', '--no-expiry'], { env });
    expect(both).toMatchObject({
      code: 1,
      stderr: 'idgate: give one of --expires-in, --expires-at and --no-expiry\n',
    });
    const past = await runInProcess(['api-keys', 'update', id, '--expires-at', '2000-01-01T00:00:00Z'], {
      env,
    });
    expect(past).toMatchObject({
      code: 1,
      stderr:
        'idgate: expiresAt "2000-01-01T00:00:00Z": must be later than now and at most ten years ahead\n',
    });
    const badName = await runInProcess(['api-keys', 'update', id, '--name', ''], { env });
    expect(badName).toMatchObject({ code: 1, stderr: 'idgate: --name: must not be empty\n' });
    const unknown = await runInProcess(['api-keys', 'show', 'idg_zzzzzzzz'], { env });
    expect(unknown).toMatchObject({ code: 1, stdout: '', stderr: 'idgate: no API key idg_zzzzzzzz\n' });

    expect((await runInProcess(['api-keys', 'revoke', id], { env })).code).toBe(0);
    const revoked = await runInProcess(['api-keys', 'update', id, '--name', 'x'], { env });
    expect(revoked).toMatchObject({ code: 1, stderr: `idgate: no active API key ${id}\n` });
    expect((await runInProcess(['api-keys', 'show', id], { env })).stdout).toMatch(/^status: +revoked /m);
  });

  it('revokes by prefix or id; a revoked or unknown key fails with one line', async () => {
    const first = JSON.parse(
      (await runInProcess(['api-keys', 'add', '--name', 'a', '--scope', 'tokenreview', '--json'], { env }))
        .stdout,
    );
    const second = JSON.parse(
      (await runInProcess(['api-keys', 'add', '--name', 'b', '--scope', 'tokenreview', '--json'], { env }))
        .stdout,
    );

    const byPrefix = await runInProcess(['api-keys', 'revoke', first.prefix], { env });
    expect(byPrefix).toMatchObject({ code: 0, stdout: `API key ${first.prefix} revoked\n`, stderr: '' });
    expect(await check(first.key, 'tokenreview')).toBe('invalid');
    expect(await check(second.key, 'tokenreview')).toBe('ok');

    const again = await runInProcess(['api-keys', 'revoke', first.id], { env });
    expect(again).toMatchObject({ code: 1, stdout: '', stderr: `idgate: no active API key ${first.id}\n` });

    expect((await runInProcess(['api-keys', 'revoke', second.id], { env })).code).toBe(0);
    expect(await check(second.key, 'tokenreview')).toBe('invalid');

    const unknown = await runInProcess(['api-keys', 'revoke', 'idg_zzzzzzzz'], { env });
    expect(unknown).toMatchObject({
      code: 1,
      stdout: '',
      stderr: 'idgate: no active API key idg_zzzzzzzz\n',
    });

    const listed = z
      .array(ApiKey)
      .parse(JSON.parse((await runInProcess(['api-keys', 'list', '--json'], { env })).stdout));
    expect(listed.map((k) => k.revokedAt === null)).toEqual([false, false]);
    const human = await runInProcess(['api-keys', 'list'], { env });
    expect(human.stdout.match(/ revoked \d{4}-/g)).toHaveLength(2);
  });
});
