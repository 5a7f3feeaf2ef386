import { existsSync, statSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { assertBuilt, envFor, lines, runInProcess, SECRET, tempSqlite } from './support.js';

beforeAll(assertBuilt);

let db: Awaited<ReturnType<typeof tempSqlite>>;
beforeEach(async () => {
  db = await tempSqlite();
});
afterEach(async () => {
  await db.remove();
});

describe('configuration errors', () => {
  it.each([{ args: ['serve'] }, { args: ['users', 'list', '--json'] }, { args: ['migrate'] }])(
    '$args: names each bad variable, exit 1, nothing on stdout',
    async ({ args }) => {
      const folder = join(db.dir, 'fresh');
      const result = await runInProcess(args, {
        env: envFor(`sqlite:${join(folder, 'idgate.db')}`, { IDGATE_PORT: 'abc', IDGATE_ISSUER: 'ftp://x' }),
      });
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      expect(lines(result.stderr)).toEqual([
        'idgate: invalid configuration:',
        '  - IDGATE_PORT must be a port number 0–65535, got "abc"',
        '  - IDGATE_ISSUER must be an http(s) URL, got "ftp://x"',
      ]);
      expect(result.stderr).not.toMatch(/^\s+at /m);
      expect(existsSync(folder)).toBe(false);
    },
  );

  it('reads --config and IDGATE_CONFIG, and reports a bad file', async () => {
    const file = join(db.dir, 'idgate.yaml');
    await writeFile(file, `database:\n  url: "${db.url}"\nsecret: "${SECRET}"\n`);
    const viaOption = await runInProcess(['--config', file, 'users', 'list', '--json'], { env: {} });
    expect(viaOption).toMatchObject({ code: 0, stdout: '[]\n' });
    const viaEnv = await runInProcess(['users', 'list', '--json'], { env: { IDGATE_CONFIG: file } });
    expect(viaEnv).toMatchObject({ code: 0, stdout: '[]\n', stderr: '' });

    const bad = join(db.dir, 'bad.yaml');
    await writeFile(bad, 'prot: 8080\n');
    const result = await runInProcess(['users', 'list', '--config', bad], { env: {} });
    expect(result).toMatchObject({
      code: 1,
      stdout: '',
      stderr: 'idgate: invalid configuration:\n  - prot: unknown setting\n',
    });
  });

  it('reports a database it cannot open in one line, with the stack only under IDGATE_DEBUG=1', async () => {
    const env = { IDGATE_DATABASE_URL: 'mysql://user:hunter2@db/idgate', IDGATE_SECRET: SECRET };
    const result = await runInProcess(['users', 'list'], { env });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(lines(result.stderr)).toHaveLength(1);
    expect(result.stderr).toMatch(/^idgate: Unsupported database URL: .*"mysql:"/);
    expect(result.stderr).not.toContain('hunter2');

    const debug = await runInProcess(['users', 'list'], { env: { ...env, IDGATE_DEBUG: '1' } });
    expect(debug.code).toBe(1);
    expect(lines(debug.stderr)[0]).toBe(lines(result.stderr)[0]);
    expect(debug.stderr).toMatch(/^\s+at /m);
  });
});

describe('usage errors', () => {
  it.each([
    [['frobnicate'], "idgate: unknown command 'frobnicate'\n"],
    [['user', 'list'], "idgate: unknown command 'user' (Did you mean users?)\n"],
    [['users', 'list', '--jsn'], "idgate: unknown option '--jsn' (Did you mean --json?)\n"],
    [['users', 'add'], "idgate: missing required argument 'username'\n"],
    [
      ['users', 'disable', 'a', 'b'],
      "idgate: too many arguments for 'disable'. Expected 1 argument but got 2.\n",
    ],
  ])('%j → non-zero exit and one line', async (args, message) => {
    const result = await runInProcess(args, { env: envFor(db.url) });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(message);
  });

  it('prints help on stdout with exit 0, and help on stderr with a non-zero exit when no command is given', async () => {
    const help = await runInProcess(['--help'], { env: {} });
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: idgate \[options\] \[command\]/);
    for (const command of ['serve', 'migrate', 'init', 'users', 'clients', 'api-keys', 'keys']) {
      expect(help.stdout).toMatch(new RegExp(`^  ${command}\\b`, 'm'));
    }
    const none = await runInProcess([], { env: {} });
    expect(none.code).toBe(2);
    expect(none.stdout).toBe('');
    expect(none.stderr).toMatch(/^Usage: idgate/);
  });
});

describe('a generated secret', () => {
  it('is written next to the SQLite database with mode 0600, with a warning on stderr, once', async () => {
    const secretFile = join(db.dir, 'secret');
    const first = await runInProcess(['users', 'list', '--json'], { env: { IDGATE_DATABASE_URL: db.url } });
    expect(first.code).toBe(0);
    expect(first.stdout).toBe('[]\n');
    const warnings = lines(first.stderr).filter((line) => line.startsWith('idgate: warning: '));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(`no secret configured: generated one in ${secretFile}`);
    expect(statSync(secretFile).mode & 0o777).toBe(0o600);

    const second = await runInProcess(['users', 'list', '--json'], { env: { IDGATE_DATABASE_URL: db.url } });
    expect(second).toMatchObject({ code: 0, stdout: '[]\n', stderr: '' });
  });
});
