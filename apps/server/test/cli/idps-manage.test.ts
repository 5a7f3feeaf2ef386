import { IdentityProvider } from '@idgate/schema';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { TestDatabase } from '../helpers/databases.js';
import { CLIENT_SECRET, GITHUB, stored } from './idps-support.js';
import { assertBuilt, cliDatabaseUrls, envFor, runInProcess, tempSqlite } from './support.js';

beforeAll(assertBuilt);

let db: Awaited<ReturnType<typeof tempSqlite>>;
let env: Record<string, string>;
beforeEach(async () => {
  db = await tempSqlite();
  env = envFor(db.url, { IDGATE_ISSUER: 'https://id.example.com/oauth' });
  expect((await runInProcess(['migrate'], { env })).code).toBe(0);
});
afterEach(async () => {
  await db.remove();
});

describe('idgate idps list, disable, enable, remove', () => {
  it('lists, disables, enables and removes; unknown names fail with one line', async () => {
    expect(await runInProcess(['idps', 'list'], { env })).toMatchObject({
      code: 0,
      stdout: 'no identity providers in the database\n',
    });
    expect(
      (await runInProcess([...GITHUB, '--client-secret-stdin'], { env, input: CLIENT_SECRET })).code,
    ).toBe(0);
    const gitlab = ['idps', 'add', '--name', 'gitlab', '--type', 'gitlab', '--client-id', 'x'];
    expect((await runInProcess([...gitlab, '--client-secret-stdin'], { env, input: 's' })).code).toBe(0);

    const listed = await runInProcess(['idps', 'list', '--json'], { env });
    expect(listed.code).toBe(0);
    expect(listed.stdout).not.toContain(CLIENT_SECRET);
    const providers = z.array(IdentityProvider).parse(JSON.parse(listed.stdout));
    expect(providers.map((p) => [p.name, p.source, p.config.clientSecret])).toEqual([
      ['github', 'database', '[set]'],
      ['gitlab', 'database', '[set]'],
    ]);

    expect(await runInProcess(['idps', 'disable', 'GitHub'], { env })).toMatchObject({
      code: 0,
      stdout: 'identity provider github disabled\n',
    });
    expect((await runInProcess(['idps', 'disable', 'github'], { env })).stdout).toBe(
      'identity provider github is already disabled\n',
    );
    const table = await runInProcess(['idps', 'list'], { env });
    expect(table.stdout).toMatch(/^NAME +TYPE +STATUS +MAPPING +DISPLAY_NAME +CREATED$/m);
    expect(table.stdout).toMatch(/^github +github +disabled +auto +- +\d{4}-/m);
    expect(table.stdout).toMatch(/^gitlab +gitlab +enabled /m);
    expect((await stored(db.url)).configs.map((c) => c.disabled)).toEqual([true, false]);
    expect((await runInProcess(['idps', 'enable', 'github'], { env })).stdout).toBe(
      'identity provider github enabled\n',
    );
    expect((await stored(db.url)).configs.map((c) => c.disabled)).toEqual([false, false]);

    for (const verb of ['disable', 'enable', 'remove']) {
      const result = await runInProcess(['idps', verb, 'nope'], { env });
      expect(result).toMatchObject({ code: 1, stdout: '' });
      expect(result.stderr).toBe('idgate: no identity provider nope in the database\n');
    }
  });

  it('removes a provider with the identities linked through it, and says how many', async () => {
    for (const user of ['alice', 'bob'])
      expect((await runInProcess(['users', 'add', user], { env })).code).toBe(0);
    expect((await runInProcess([...GITHUB, '--client-secret-stdin'], { env, input: 's' })).code).toBe(0);
    const gitlab = ['idps', 'add', '--name', 'gitlab', '--type', 'gitlab', '--client-id', 'x'];
    expect((await runInProcess([...gitlab, '--client-secret-stdin'], { env, input: 's' })).code).toBe(0);
    for (const [user, idp, subject] of [
      ['alice', 'github', '1'],
      ['bob', 'github', '2'],
      ['alice', 'gitlab', '1'],
    ] as const) {
      const linked = await runInProcess(['users', 'link', user, '--idp', idp, '--subject', subject], { env });
      expect(linked.code).toBe(0);
    }

    const removed = await runInProcess(['idps', 'remove', 'GitHub'], { env });
    expect(removed).toMatchObject({
      code: 0,
      stdout: 'identity provider github removed; 2 linked identities unlinked\n',
      stderr: '',
    });
    const alice = await runInProcess(['users', 'identities', 'alice', '--json'], { env });
    expect((JSON.parse(alice.stdout) as { provider: string }[]).map((i) => i.provider)).toEqual(['gitlab']);
    expect(
      JSON.parse((await runInProcess(['users', 'identities', 'bob', '--json'], { env })).stdout),
    ).toEqual([]);
    expect((await runInProcess(['idps', 'remove', 'gitlab'], { env })).stdout).toBe(
      'identity provider gitlab removed; 1 linked identity unlinked\n',
    );
    expect((await stored(db.url)).rows).toEqual([]);
  });
});

describe.each(cliDatabaseUrls().filter((kind) => kind.name === 'postgres'))(
  'idgate idps on $name',
  ({ create }) => {
    let database: TestDatabase;
    let pgEnv: Record<string, string>;
    beforeEach(async () => {
      database = await create();
      // A shared database needs a configured secret: envFor sets IDGATE_SECRET.
      pgEnv = envFor(database.url);
      expect((await runInProcess(['migrate'], { env: pgEnv })).code).toBe(0);
    });
    afterEach(async () => {
      await database.drop();
    });

    it('adds with a sealed secret, links, lists and removes', async () => {
      const added = await runInProcess([...GITHUB, '--client-secret-stdin', '--json'], {
        env: pgEnv,
        input: CLIENT_SECRET,
      });
      expect(added).toMatchObject({ code: 0, stderr: '' });
      expect(added.stdout).not.toContain(CLIENT_SECRET);
      const { rows, configs } = await stored(database.url);
      expect(rows[0]?.config).not.toContain(CLIENT_SECRET);
      expect(configs[0]).toMatchObject({ clientSecret: CLIENT_SECRET });

      expect((await runInProcess(['users', 'add', 'alice'], { env: pgEnv })).code).toBe(0);
      const link = ['users', 'link', 'alice', '--idp', 'github', '--subject', '583231'];
      expect((await runInProcess(link, { env: pgEnv })).code).toBe(0);
      const listed = await runInProcess(['idps', 'list', '--json'], { env: pgEnv });
      expect(JSON.parse(listed.stdout)).toMatchObject([
        { name: 'github', config: { clientSecret: '[set]' } },
      ]);
      expect((await runInProcess(['idps', 'remove', 'github'], { env: pgEnv })).stdout).toBe(
        'identity provider github removed; 1 linked identity unlinked\n',
      );
      expect((await runInProcess(['users', 'identities', 'alice', '--json'], { env: pgEnv })).stdout).toBe(
        '[]\n',
      );
    });
  },
);
