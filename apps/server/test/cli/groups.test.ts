import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type TestDatabase, testDatabaseUrls } from '../helpers/databases.js';
import { assertBuilt, envFor, lines, runInProcess } from './support.js';

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
    const listed = (json: string) =>
      (JSON.parse(json) as Array<{ name: string; members: number }>).map((g) => [g.name, g.members]);
    expect(listed((await cli(['groups', 'list', '--json'])).stdout)).toEqual([
      ['dev', 2],
      ['ops', 1],
    ]);
    const text = await runInProcess(['groups', 'list'], { env });
    expect(lines(text.stdout)).toEqual([
      'GROUP  MEMBERS  DESCRIPTION',
      'dev    2        -',
      'ops    1        -',
    ]);
    const paged = await cli(['groups', 'list', '--limit', '1', '--json']);
    expect(listed(paged.stdout)).toEqual([['dev', 2]]);
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

  it('creates, describes, renames, updates and deletes groups', async () => {
    const created = await cli(['groups', 'create', 'web', '--description', 'Web team']);
    expect(created.code).toBe(0);
    expect(lines(created.stdout).slice(0, 5)).toEqual([
      'created group web',
      'name: web',
      'description: Web team',
      'require MFA: no',
      'members: 0',
    ]);
    expect(await cli(['groups', 'create', 'web'])).toMatchObject({
      code: 1,
      stderr: 'idgate: group web already exists\n',
    });
    expect(await cli(['groups', 'create', 'x', '--description', ''])).toMatchObject({ code: 0 });
    expect((await cli(['groups', 'list'])).stdout).toContain('web    0        Web team');
    expect((await cli(['users', 'add', 'ann', '--group', 'web'])).code).toBe(0);
    expect((await cli(['users', 'add', 'ben', '--group', 'web', '--group', 'dev'])).code).toBe(0);
    expect(JSON.parse((await cli(['groups', 'describe', 'web', '--json'])).stdout)).toMatchObject({
      name: 'web',
      description: 'Web team',
      members: 2,
    });

    expect(await cli(['groups', 'rename', 'web', 'frontend'])).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(/^renamed group web to frontend \(2 member\(s\)\)\n/),
    });
    expect(JSON.parse((await cli(['users', 'show', 'ben', '--json'])).stdout).groups).toEqual([
      'frontend',
      'dev',
    ]);
    expect(await cli(['groups', 'describe', 'web'])).toMatchObject({
      code: 1,
      stderr: 'idgate: no group web\n',
    });
    expect(await cli(['groups', 'rename', 'frontend', 'dev'])).toMatchObject({
      code: 1,
      stderr: 'idgate: group dev already exists\n',
    });
    expect(await cli(['groups', 'rename', 'frontend', 'system:x'])).toMatchObject({
      code: 1,
      stderr: 'idgate: NEW "system:x": must not start with "system:", which Kubernetes reserves\n',
    });

    const updated = await cli(['groups', 'update', 'frontend', '--description', 'Front end', '--json']);
    expect(JSON.parse(updated.stdout)).toMatchObject({ name: 'frontend', description: 'Front end' });
    expect(
      JSON.parse((await cli(['groups', 'update', 'frontend', '--description', '', '--json'])).stdout),
    ).toMatchObject({
      description: null,
    });
    // Whether its members need a second factor: on, off, and nothing to change refused.
    expect(await cli(['groups', 'update', 'frontend', '--require-mfa'])).toMatchObject({
      code: 0,
      stdout: expect.stringContaining('require MFA: yes\n'),
    });
    expect(
      JSON.parse((await cli(['groups', 'update', 'frontend', '--no-require-mfa', '--json'])).stdout),
    ).toMatchObject({ requireMfa: false, description: null });
    expect(await cli(['groups', 'update', 'frontend'])).toMatchObject({
      code: 1,
      stderr: 'idgate: nothing to change: give --description, --require-mfa or --no-require-mfa\n',
    });
    expect(
      JSON.parse((await cli(['groups', 'create', 'ops', '--require-mfa', '--json'])).stdout),
    ).toMatchObject({ name: 'ops', requireMfa: true });

    expect(await cli(['groups', 'delete', 'frontend'])).toMatchObject({
      code: 1,
      stderr: 'idgate: group frontend has 2 members; take them out first, or delete with force\n',
    });
    expect(JSON.parse((await cli(['groups', 'delete', 'frontend', '--force', '--json'])).stdout)).toEqual({
      name: 'frontend',
      removedMembers: 2,
    });
    expect(JSON.parse((await cli(['users', 'show', 'ben', '--json'])).stdout).groups).toEqual(['dev']);
    expect(await cli(['groups', 'delete', 'x'])).toMatchObject({
      code: 0,
      stdout: 'group x deleted (0 member(s) taken out)\n',
    });
    expect(await cli(['groups', 'delete', 'x'])).toMatchObject({ code: 1, stderr: 'idgate: no group x\n' });
  });
});
