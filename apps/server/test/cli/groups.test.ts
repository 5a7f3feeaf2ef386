import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type TestDatabase, testDatabaseUrls } from '../helpers/databases.js';
import { assertBuilt, envFor, lines, run, runInProcess } from './support.js';

beforeAll(assertBuilt);

describe.each(testDatabaseUrls())('idgate groups on $name', ({ create }) => {
  let database: TestDatabase;
  let env: Record<string, string>;
  const cli = (args: string[]) => runInProcess(args, { env });
  beforeEach(async () => {
    database = await create();
    env = envFor(database.url);
    expect((await cli(['migrate'])).code).toBe(0);
  });
  afterEach(async () => {
    await database.drop();
  });

  it('lists groups with member counts, lists members, adds and removes them', async () => {
    expect((await cli(['groups', 'list'])).stdout).toBe('no groups\n');
    expect((await cli(['users', 'add', 'ann', '--group', 'dev', '--group', 'ops'])).code).toBe(0);
    expect((await cli(['users', 'add', 'ben', '--group', 'dev'])).code).toBe(0);
    expect(JSON.parse((await cli(['groups', 'list', '--json'])).stdout)).toEqual([
      { name: 'dev', members: 2 },
      { name: 'ops', members: 1 },
    ]);
    const text = await run(['groups', 'list'], { env });
    expect(lines(text.stdout)).toEqual(['GROUP  MEMBERS', 'dev    2', 'ops    1']);
    const paged = await cli(['groups', 'list', '--limit', '1', '--json']);
    expect(JSON.parse(paged.stdout)).toEqual([{ name: 'dev', members: 2 }]);
    expect(paged.stderr).toMatch(/^idgate: more groups: --cursor \S+\n$/);

    expect(await cli(['groups', 'add', 'ops', 'BEN'])).toMatchObject({
      code: 0,
      stdout: 'added ben to ops\n',
    });
    expect(await cli(['groups', 'add', 'ops', 'ben'])).toMatchObject({
      stdout: 'user ben is already in ops\n',
    });
    const members = JSON.parse((await cli(['groups', 'members', 'ops', '--json'])).stdout) as Array<{
      username: string;
    }>;
    expect(members.map((u) => u.username)).toEqual(['ann', 'ben']);
    expect(await cli(['groups', 'remove', 'ops', 'ann'])).toMatchObject({
      code: 0,
      stdout: 'removed ann from ops\n',
    });
    expect(await cli(['groups', 'remove', 'ops', 'ann'])).toMatchObject({
      stdout: 'user ann is not in ops\n',
    });
    expect((await cli(['users', 'show', 'ann', '--json'])).stdout).toContain('"dev"');
  });

  it('refuses unknown groups and users, and malformed names, in one line', async () => {
    expect((await cli(['users', 'add', 'ann'])).code).toBe(0);
    expect(await cli(['groups', 'members', 'nobody'])).toMatchObject({
      code: 1,
      stdout: '',
      stderr: 'idgate: no group nobody\n',
    });
    expect(await cli(['groups', 'add', 'dev', 'ghost'])).toMatchObject({
      code: 1,
      stderr: 'idgate: no user ghost\n',
    });
    expect(await cli(['groups', 'add', 'system:masters', 'ann'])).toMatchObject({
      code: 1,
      stderr: 'idgate: group "system:masters": must not start with "system:", which Kubernetes reserves\n',
    });
    expect(await cli(['groups', 'add', 'a b', 'ann'])).toMatchObject({
      code: 1,
      stderr: 'idgate: group "a b": may hold only printable ASCII characters without spaces\n',
    });
    expect((await cli(['groups', 'list', '--limit', '501'])).stderr).toBe(
      'idgate: --limit "501": must be a whole number from 1 to 500\n',
    );
  });
});
