import { SigningKeyInfo } from '@idgate/schema';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MIGRATION_NAMES } from '../../src/storage/migrations/index.js';
import { assertBuilt, envFor, runInProcess, tempSqlite } from './support.js';

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

describe('idgate keys', () => {
  it('rotates: the new key is active, the old one retired and published for the longest token lifetime', async () => {
    // No activation delay: the new key signs at once (the delay's own test is below).
    env = { ...env, IDGATE_KEY_ACTIVATION_DELAY: '0' };
    const initial = await runInProcess(['keys', 'list', '--json'], { env });
    expect(initial.code).toBe(0);
    const [first, ...others] = z.array(SigningKeyInfo).parse(JSON.parse(initial.stdout));
    expect(others).toEqual([]);
    expect(first).toMatchObject({ alg: 'RS256', state: 'active', retiredAt: null, publishedUntil: null });

    const rotated = await runInProcess(['keys', 'rotate', '--json'], { env });
    expect(rotated.code).toBe(0);
    expect(rotated.stderr).toBe('');
    const printed = JSON.parse(rotated.stdout) as { created: unknown; retired: string[] };
    expect(Object.keys(printed).sort()).toEqual(['created', 'retired']);
    const created = SigningKeyInfo.parse(printed.created);
    expect(created.state).toBe('active');
    expect(created.kid).not.toBe(first?.kid);
    expect(printed.retired).toEqual([first?.kid]);

    const listed = await runInProcess(['keys', 'list', '--json'], { env });
    const keys = z.array(SigningKeyInfo).parse(JSON.parse(listed.stdout));
    expect(keys.map((k) => [k.kid, k.state])).toEqual([
      [created.kid, 'active'],
      [first?.kid, 'retired'],
    ]);
    const retired = keys[1];
    // maxTokenLifetimeSeconds = max(maxAccessTokenTtl 86400, idTokenTtl 3600).
    expect(Date.parse(retired?.publishedUntil ?? '') - Date.parse(retired?.retiredAt ?? '')).toBe(86_400_000);
    expect(listed.stdout).not.toMatch(/"d"|sealed|private/i);

    const human = await runInProcess(['keys', 'rotate'], { env });
    expect(human.stdout).toMatch(
      new RegExp(
        `^new active key: \\S+ \\(RS256\\)\\nretired: ${created.kid}\\nrunning servers publish the new key and sign with it at once\\n`,
      ),
    );
    const table = await runInProcess(['keys', 'list'], { env });
    expect(table.stdout.match(/ active /g)).toHaveLength(1);
    expect(table.stdout.match(/ retired /g)).toHaveLength(2);
  });

  it('rotates with an activation delay: the new key is next, the current one signs until the delay has passed', async () => {
    env = { ...env, IDGATE_KEY_ACTIVATION_DELAY: '3600' };
    const [first] = z
      .array(SigningKeyInfo)
      .parse(JSON.parse((await runInProcess(['keys', 'list', '--json'], { env })).stdout));
    const rotated = await runInProcess(['keys', 'rotate'], { env });
    expect(rotated).toMatchObject({ code: 0, stderr: '' });
    const kid = /^new next key: (\S+) \(RS256\)\n/.exec(rotated.stdout)?.[1];
    expect(kid).toBeDefined();
    expect(rotated.stdout).toContain(`retired: ${first?.kid}\n`);
    expect(rotated.stdout).toContain('sign with it in 3600 seconds');
    const keys = z
      .array(SigningKeyInfo)
      .parse(JSON.parse((await runInProcess(['keys', 'list', '--json'], { env })).stdout));
    expect(keys.map((k) => [k.kid, k.state])).toEqual([
      [kid, 'next'],
      [first?.kid, 'active'],
    ]);
  });

  it('uses the configured algorithm', async () => {
    const result = await runInProcess(['keys', 'rotate', '--json'], {
      env: { ...env, IDGATE_SIGNING_ALGORITHM: 'ES256', IDGATE_KEY_ACTIVATION_DELAY: '0' },
    });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).created).toMatchObject({ alg: 'ES256', state: 'active' });
  });
});

describe('idgate migrate', () => {
  // migrate creates the database: start from none.
  beforeEach(async () => {
    await db.remove();
    db = await tempSqlite({ fresh: true });
    env = envFor(db.url);
  });

  it('applies migrations once and reports them, as JSON or text', async () => {
    const first = await runInProcess(['migrate', '--json'], { env });
    expect(first).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(first.stdout)).toEqual({
      applied: [...MIGRATION_NAMES],
    });
    const again = await runInProcess(['migrate', '--json'], { env });
    expect(JSON.parse(again.stdout)).toEqual({ applied: [] });
    const text = await runInProcess(['migrate'], { env });
    expect(text).toMatchObject({ code: 0, stdout: 'database is up to date\n', stderr: '' });
  });

  it('needs no secret', async () => {
    const result = await runInProcess(['migrate'], { env: { IDGATE_DATABASE_URL: db.url } });
    expect(result).toMatchObject({
      code: 0,
      stdout: `applied migrations: ${MIGRATION_NAMES.join(', ')}\n`,
      stderr: '',
    });
  });
});
