import { UserFactors } from '@idgate/schema';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { assertBuilt, envFor, runInProcess, tempSqlite } from './support.js';

beforeAll(assertBuilt);

describe('idgate users update --require-mfa, factors, remove-factor, reset-factors', () => {
  let db: Awaited<ReturnType<typeof tempSqlite>>;
  let env: Record<string, string>;
  beforeEach(async () => {
    db = await tempSqlite();
    env = envFor(db.url);
    expect((await runInProcess(['users', 'add', 'alice'], { env })).code).toBe(0);
  });
  afterEach(async () => {
    await db.remove();
  });

  it('requires a second factor and stops requiring it, as `users factors` shows', async () => {
    const factors = async () =>
      UserFactors.parse(
        JSON.parse((await runInProcess(['users', 'factors', 'alice', '--json'], { env })).stdout),
      );
    expect(await factors()).toEqual({
      username: 'alice',
      mfaRequired: false,
      recoveryCodesLeft: 0,
      factors: [],
    });
    expect(await runInProcess(['users', 'update', 'alice', '--require-mfa'], { env })).toMatchObject({
      code: 0,
      stderr: '',
    });
    expect(await factors()).toMatchObject({ mfaRequired: true });
    expect((await runInProcess(['users', 'factors', 'alice'], { env })).stdout).toBe(
      'alice: second factor required, 0 unused recovery codes\nno second factors\n',
    );
    expect(await runInProcess(['users', 'update', 'alice', '--no-require-mfa'], { env })).toMatchObject({
      code: 0,
    });
    expect(await factors()).toMatchObject({ mfaRequired: false });
  });

  it('resets (nothing to remove is fine) and refuses to remove a factor the user does not have', async () => {
    expect(await runInProcess(['users', 'reset-factors', 'alice', '--json'], { env })).toMatchObject({
      code: 0,
      stdout: '{\n  "removed": 0\n}\n',
    });
    expect(await runInProcess(['users', 'remove-factor', 'alice', 'f-nope'], { env })).toMatchObject({
      code: 1,
      stderr: 'idgate: user alice has no second factor f-nope\n',
    });
    expect((await runInProcess(['users', 'factors', 'nobody'], { env })).stderr).toBe(
      'idgate: no user nobody\n',
    );
  });
});
