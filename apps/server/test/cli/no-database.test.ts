import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InitResult } from '@idgate/schema';
import pg from 'pg';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MIGRATION_NAMES } from '../../src/storage/migrations/index.js';
import { assertBuilt, run, SECRET } from './support.js';

beforeAll(assertBuilt);

const FIX =
  'Run `idgate init` to create and set up a database there (or `idgate migrate` for the tables alone), ' +
  'or set IDGATE_DATABASE_URL or --config to an existing idgate database';

const MIGRATIONS = [...MIGRATION_NAMES];

// Commands that only read or change an existing database: none may create one.
const READERS: string[][] = [
  ['users', 'list'],
  ['users', 'list', '--json'],
  ['users', 'add', 'alice', '--password-stdin'],
  ['clients', 'list'],
  ['api-keys', 'list', '--json'],
  ['keys', 'list'],
  ['keys', 'rotate'],
  ['idps', 'list'],
  ['clusters', 'list'],
];

/** Every file and folder under `dir`, relative to it. */
async function tree(dir: string): Promise<string[]> {
  return (await readdir(dir, { recursive: true })).sort();
}

describe('a command outside an idgate project (SQLite, the default database)', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'idgate-nodb-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it.each(READERS.map((args) => [args.join(' '), args]))(
    '%s refuses in one line naming the file and the fix, and creates nothing',
    async (_name, args) => {
      const result = await run(args as string[], { env: {}, cwd: dir, input: 'correct horse battery\n' });
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      expect(result.stderr).toBe(
        `idgate: no idgate database at ${join(dir, 'data', 'idgate.db')}: the file does not exist ` +
          `(the default sqlite:./data/idgate.db, relative to the working directory ${dir}). ${FIX}\n`,
      );
      expect(await tree(dir)).toEqual([]);
    },
  );

  it('init creates the database, its secret and a signing key; then users list works', async () => {
    const init = await run(['init', '--json'], { env: {}, cwd: dir });
    expect(init.code).toBe(0);
    InitResult.parse(JSON.parse(init.stdout));
    expect(await tree(dir)).toEqual(expect.arrayContaining(['data', 'data/idgate.db', 'data/secret']));
    const list = await run(['users', 'list', '--json'], { env: {}, cwd: dir });
    expect(list).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(list.stdout)).toMatchObject([{ username: 'admin' }]);
  });

  it('migrate creates the database and reports the migrations; then users list works', async () => {
    const migrate = await run(['migrate', '--json'], { env: {}, cwd: dir });
    expect(migrate).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(migrate.stdout)).toEqual({ applied: MIGRATIONS });
    const list = await run(['users', 'list'], { env: { IDGATE_SECRET: SECRET }, cwd: dir });
    expect(list).toMatchObject({ code: 0, stdout: 'no users\n', stderr: '' });
  });

  it('names IDGATE_DATABASE_URL when the path came from it, and creates no folder on the way', async () => {
    const file = join(dir, 'nested', 'idgate.db');
    const result = await run(['users', 'list'], { env: { IDGATE_DATABASE_URL: `sqlite:${file}` }, cwd: dir });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `idgate: no idgate database at ${file}: the file does not exist (set by IDGATE_DATABASE_URL). ${FIX}\n`,
    );
    expect(await tree(dir)).toEqual([]);
  });

  it('names the configuration file when the path came from it', async () => {
    const config = join(dir, 'idgate.yaml');
    await writeFile(config, 'database:\n  url: sqlite:./state/idgate.db\n');
    const result = await run(['--config', config, 'clients', 'list'], { env: {}, cwd: dir });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `idgate: no idgate database at ${join(dir, 'state', 'idgate.db')}: the file does not exist ` +
        `(set by database.url in ${config}). ${FIX}\n`,
    );
    expect(await tree(dir)).toEqual(['idgate.yaml']);
  });

  it('refuses a SQLite file that holds no idgate tables', async () => {
    const file = join(dir, 'other.db');
    await writeFile(file, '');
    const result = await run(['users', 'list'], { env: { IDGATE_DATABASE_URL: `sqlite:${file}` }, cwd: dir });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `idgate: no idgate database at ${file}: the file holds no idgate tables (set by IDGATE_DATABASE_URL). ${FIX}\n`,
    );
    expect(await tree(dir)).not.toContain('secret');
  });
});

const serverUrl = process.env.IDGATE_TEST_DATABASE_URL;

describe.skipIf(serverUrl === undefined || serverUrl === '')(
  'a command on a PostgreSQL database without idgate tables',
  () => {
    let name: string;
    let url: string;
    const admin = async <T>(work: (client: pg.Client) => Promise<T>, database?: string): Promise<T> => {
      const target = new URL(serverUrl as string);
      if (database !== undefined) target.pathname = `/${database}`;
      const client = new pg.Client({ connectionString: target.toString() });
      await client.connect();
      try {
        return await work(client);
      } finally {
        await client.end();
      }
    };
    const tables = () =>
      admin(async (client) => {
        const { rows } = await client.query<{ n: string }>(
          "select count(*) as n from information_schema.tables where table_schema = 'public'",
        );
        return Number(rows[0]?.n);
      }, name);

    beforeEach(async () => {
      // Hex only: the name needs no quoting beyond the double quotes.
      name = `idgate_empty_${randomBytes(8).toString('hex')}`;
      await admin((client) => client.query(`CREATE DATABASE "${name}"`));
      const target = new URL(serverUrl as string);
      target.pathname = `/${name}`;
      url = target.toString();
    });
    afterEach(async () => {
      await admin(async (client) => {
        await client.query(
          'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
          [name],
        );
        await client.query(`DROP DATABASE IF EXISTS "${name}"`);
      });
    });

    it.each(READERS.map((args) => [args.join(' '), args]))(
      '%s refuses in one line naming the server and database (never the password), creating no table',
      async (_name, args) => {
        const env = { IDGATE_DATABASE_URL: url, IDGATE_SECRET: SECRET };
        const result = await run(args as string[], { env, input: 'correct horse battery\n' });
        expect(result.code).toBe(1);
        expect(result.stdout).toBe('');
        const { host } = new URL(url);
        expect(result.stderr).toBe(
          `idgate: no idgate database at ${host}/${name}: the PostgreSQL database holds no idgate tables ` +
            `(set by IDGATE_DATABASE_URL). ${FIX}\n`,
        );
        expect(await tables()).toBe(0);
      },
    );

    it('init sets the database up; then users list works', async () => {
      const env = { IDGATE_DATABASE_URL: url, IDGATE_SECRET: SECRET };
      const init = await run(['init', '--json'], { env });
      expect(init.code).toBe(0);
      expect(InitResult.parse(JSON.parse(init.stdout)).admin.username).toBe('admin');
      const list = await run(['users', 'list', '--json'], { env });
      expect(list).toMatchObject({ code: 0, stderr: '' });
      expect(JSON.parse(list.stdout)).toMatchObject([{ username: 'admin' }]);
    });

    it('migrate creates the tables and reports them; then users list works', async () => {
      const env = { IDGATE_DATABASE_URL: url, IDGATE_SECRET: SECRET };
      const migrate = await run(['migrate', '--json'], { env });
      expect(migrate).toMatchObject({ code: 0, stderr: '' });
      expect(JSON.parse(migrate.stdout)).toEqual({ applied: MIGRATIONS });
      expect(await tables()).toBeGreaterThan(0);
      const list = await run(['users', 'list'], { env });
      expect(list).toMatchObject({ code: 0, stdout: 'no users\n', stderr: '' });
    });
  },
);
