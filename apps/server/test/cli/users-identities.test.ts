import { LinkedIdentity } from '@idgate/schema';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { assertBuilt, envFor, runInProcess, tempSqlite } from './support.js';

beforeAll(assertBuilt);

describe('idgate users link, identities, unlink', () => {
  let db: Awaited<ReturnType<typeof tempSqlite>>;
  let env: Record<string, string>;
  beforeEach(async () => {
    db = await tempSqlite();
    env = envFor(db.url);
    for (const user of ['alice', 'bob'])
      expect((await runInProcess(['users', 'add', user], { env })).code).toBe(0);
    const github = ['idps', 'add', '--name', 'github', '--type', 'github', '--client-id', 'x'];
    expect((await runInProcess([...github, '--client-secret-stdin'], { env, input: 's' })).code).toBe(0);
  });
  afterEach(async () => {
    await db.remove();
  });

  it('links a subject to a user once, lists it as LinkedIdentity, and unlinks it', async () => {
    const linked = await runInProcess(
      ['users', 'link', 'Alice', '--idp', 'GitHub', '--subject', '583231', '--json'],
      {
        env,
      },
    );
    expect(linked).toMatchObject({ code: 0, stderr: '' });
    const identity = LinkedIdentity.parse(JSON.parse(linked.stdout));
    expect(identity).toMatchObject({ provider: 'github', subject: '583231', email: null, lastLoginAt: null });
    const again = await runInProcess(['users', 'link', 'bob', '--idp', 'github', '--subject', '583231'], {
      env,
    });
    expect(again).toMatchObject({
      code: 1,
      stderr: 'idgate: github subject 583231 is linked already, to user alice\n',
    });

    const listed = await runInProcess(['users', 'identities', 'alice', '--json'], { env });
    expect(z.array(LinkedIdentity).parse(JSON.parse(listed.stdout))).toStrictEqual([identity]);
    expect((await runInProcess(['users', 'identities', 'alice'], { env })).stdout).toMatch(
      /^github +583231 +583231 +- +- +\d{4}-.+ +-$/m,
    );
    expect((await runInProcess(['users', 'identities', 'bob'], { env })).stdout).toBe(
      'no linked identities for bob\n',
    );

    const wrongUser = await runInProcess(
      ['users', 'unlink', 'bob', '--idp', 'github', '--subject', '583231'],
      {
        env,
      },
    );
    expect(wrongUser).toMatchObject({ code: 1, stderr: 'idgate: user bob has no github identity 583231\n' });
    const unlinked = await runInProcess(
      ['users', 'unlink', 'alice', '--idp', 'github', '--subject', '583231'],
      {
        env,
      },
    );
    expect(unlinked).toMatchObject({ code: 0, stdout: 'unlinked github subject 583231 from user alice\n' });
    expect((await runInProcess(['users', 'identities', 'alice', '--json'], { env })).stdout).toBe('[]\n');
  });

  it('fails with one line for an unknown user or provider, or an empty subject', async () => {
    const link = (user: string, idp: string, subject: string) =>
      runInProcess(['users', 'link', user, '--idp', idp, '--subject', subject], { env });
    expect((await link('nobody', 'github', '1')).stderr).toBe('idgate: no user nobody\n');
    expect((await link('alice', 'github', '')).stderr).toBe('idgate: --subject: must not be empty\n');
    const unknown = await link('alice', 'corp', '1');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe(
      'idgate: no identity provider corp in the database (identities of providers declared in the ' +
        'configuration file cannot be linked from the command line yet)\n',
    );
    expect((await runInProcess(['users', 'identities', 'nobody'], { env })).stderr).toBe(
      'idgate: no user nobody\n',
    );
  });
});
