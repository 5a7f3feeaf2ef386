import { ApiKeyError, authenticateApiKey } from '@idgate/core';
import { ApiKey } from '@idgate/schema';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { TestDatabase } from '../helpers/databases.js';
import { assertBuilt, cliDatabaseUrls, envFor, openTestServices, run, runInProcess } from './support.js';

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
  async function check(key: string, scope: 'tokenreview' | 'admin'): Promise<string> {
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
    const result = await run(['api-keys', 'add', '--name', 'apiserver', '--scope', 'tokenreview', '--json'], {
      env,
    });
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

    const both = await run(
      ['api-keys', 'add', '--name', 'ops', '--scope', 'admin', '--scope', 'tokenreview'],
      { env },
    );
    expect(both.code).toBe(0);
    const shown = /^key: (idg_\S+) {2}\(shown only once\)$/m.exec(both.stdout)?.[1];
    expect(shown).toBeDefined();
    expect(await check(shown ?? '', 'admin')).toBe('ok');

    const listed = await run(['api-keys', 'list', '--json'], { env });
    expect(listed.code).toBe(0);
    const keys = z.array(ApiKey).parse(JSON.parse(listed.stdout));
    expect(keys.map((k) => [k.name, k.scopes])).toEqual([
      ['apiserver', ['tokenreview']],
      ['ops', ['tokenreview', 'admin']],
    ]);
    for (const entry of JSON.parse(listed.stdout) as object[])
      expect(Object.keys(entry).sort()).toEqual(API_KEY_KEYS);
    const human = await run(['api-keys', 'list'], { env });
    for (const output of [listed.stdout, human.stdout]) {
      expect(output).not.toContain(key);
      expect(output).not.toContain(key.slice(13));
      expect(output).not.toContain(shown?.slice(13));
    }
  });

  it('refuses a missing, unknown or absent scope and an empty name', async () => {
    const unknown = await run(['api-keys', 'add', '--name', 'x', '--scope', 'root'], { env });
    expect(unknown.code).toBe(1);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr).toMatch(
      /^idgate: --scope "root": .*"tokenreview"\|"admin"\|"users:read"\|.*"audit:read"\n$/,
    );
    const missing = await run(['api-keys', 'add', '--name', 'x'], { env });
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toBe("idgate: required option '--scope <scope...>' not specified\n");
    const empty = await run(['api-keys', 'add', '--name', ' ', '--scope', 'admin'], { env });
    expect(empty).toMatchObject({ code: 1, stdout: '', stderr: 'idgate: --name: must not be empty\n' });
    const listed = await runInProcess(['api-keys', 'list', '--json'], { env });
    expect(JSON.parse(listed.stdout)).toEqual([]);
  });

  it('revokes by prefix or id; a revoked or unknown key fails with one line', async () => {
    const first = JSON.parse(
      (await run(['api-keys', 'add', '--name', 'a', '--scope', 'tokenreview', '--json'], { env })).stdout,
    );
    const second = JSON.parse(
      (await run(['api-keys', 'add', '--name', 'b', '--scope', 'tokenreview', '--json'], { env })).stdout,
    );

    const byPrefix = await run(['api-keys', 'revoke', first.prefix], { env });
    expect(byPrefix).toMatchObject({ code: 0, stdout: `API key ${first.prefix} revoked\n`, stderr: '' });
    expect(await check(first.key, 'tokenreview')).toBe('invalid');
    expect(await check(second.key, 'tokenreview')).toBe('ok');

    const again = await run(['api-keys', 'revoke', first.id], { env });
    expect(again).toMatchObject({ code: 1, stdout: '', stderr: `idgate: no active API key ${first.id}\n` });

    expect((await run(['api-keys', 'revoke', second.id], { env })).code).toBe(0);
    expect(await check(second.key, 'tokenreview')).toBe('invalid');

    const unknown = await run(['api-keys', 'revoke', 'idg_zzzzzzzz'], { env });
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
