import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { Migrator, sql } from 'kysely';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createSqlStorage,
  type Database,
  migrateToLatest,
  openDatabase,
  pendingMigrations,
} from '../../src/storage/index.js';
import * as m0001 from '../../src/storage/migrations/0001_initial.js';
import { MIGRATION_NAMES } from '../../src/storage/migrations/index.js';
import { TABLES } from '../../src/storage/schema.js';
import { type TestDatabase, testDatabaseUrls } from '../helpers/databases.js';
import { newApiKey, newClient, newGrant, newSession, newUser } from './fixtures.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function open(url: string): Promise<Database> {
  const database = await openDatabase(url);
  cleanups.push(() => database.close());
  return database;
}

async function fresh(create: () => Promise<TestDatabase>): Promise<Database> {
  const created = await create();
  cleanups.push(() => created.drop());
  return open(created.url);
}

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'idgate-open-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

describe.each(testDatabaseUrls())('migrations on $name', ({ name, create }) => {
  it('applies every migration once, in order; a second run applies nothing', async () => {
    const database = await fresh(create);
    expect(database.dialect).toBe(name);
    const all = [
      '0001_initial',
      '0002_oidc_flows',
      '0003_federation',
      '0004_change_log',
      '0005_users_email',
      '0006_device_authorizations',
      '0007_clusters',
      '0008_users_admin',
      '0009_session_activity',
      '0010_client_secrets',
      '0013_grant_upstream',
      '0014_login_attempt_origin',
      '0015_session_upstream',
      '0016_audit_events',
      '0017_device_poll_slow_down',
      '0018_upstream_checked_at',
      '0019_grant_resources',
      '0020_audit_event_origin',
      '0021_incident_response',
      '0022_audit_chain',
      '0023_groups',
      '0024_factors',
      '0025_trusts',
      '0026_declared_objects',
      '0027_cluster_mfa',
      '0028_webauthn',
      '0029_mfa_policies',
    ];
    expect(await pendingMigrations(database)).toEqual(all);
    expect(await migrateToLatest(database)).toEqual({ applied: all });
    expect(await migrateToLatest(database)).toEqual({ applied: [] });
    expect(await pendingMigrations(database)).toEqual([]);
    // The Kysely instance is accepted too.
    expect(await migrateToLatest(database.db)).toEqual({ applied: [] });
    expect(await pendingMigrations(database.db)).toEqual([]);
  });

  it('creates every table, empty', async () => {
    const database = await fresh(create);
    await migrateToLatest(database);
    for (const table of TABLES) {
      const rows = await database.db.selectFrom(table).selectAll().execute();
      expect(rows, table).toEqual([]);
    }
  });

  it('gives clients registered before 0002_oidc_flows no post-logout redirect URIs', async () => {
    const database = await fresh(create);
    const only0001 = new Migrator({
      db: database.db,
      provider: { getMigrations: async () => ({ '0001_initial': m0001 }) },
    });
    expect((await only0001.migrateToLatest()).error).toBeUndefined();
    // As 0001 left the table: no post_logout_redirect_uris column yet.
    const { postLogoutRedirectUris: _uris, ...before } = newClient();
    await sql`insert into oauth_clients (client_id, name, secret_hash, is_public, trusted, redirect_uris,
        grant_types, scopes, audiences, access_token_ttl, refresh_token_ttl, created_at)
      values (${before.clientId}, ${before.name}, ${before.secretHash}, 0, 1,
        ${JSON.stringify(before.redirectUris)}, ${JSON.stringify(before.grantTypes)},
        ${JSON.stringify(before.scopes)}, ${JSON.stringify(before.audiences)}, ${before.accessTokenTtl},
        ${before.refreshTokenTtl}, ${before.createdAt.getTime()})`.execute(database.db);
    expect(await migrateToLatest(database)).toEqual({
      applied: MIGRATION_NAMES.filter((m) => m >= '0002_oidc_flows'),
    });
    const storage = createSqlStorage(database);
    expect(await storage.clients.findById(before.clientId)).toStrictEqual({
      ...before,
      postLogoutRedirectUris: [],
      previousSecretHash: null,
      previousSecretExpiresAt: null,
    });
  });

  it('gives every group users are in before 0023_groups a row of its own, counted by member', async () => {
    const database = await fresh(create);
    await migrateToLatest(database);
    const storage = createSqlStorage(database);
    await storage.users.create(newUser({ id: 'u1', username: 'alice', groups: ['dev', 'Ops'] }));
    await storage.users.create(newUser({ id: 'u2', username: 'bob', groups: ['dev'] }));
    await storage.users.create(newUser({ id: 'u3', username: 'carol', groups: [] }));
    // As the database was before 0023: users with groups, no groups table.
    await sql`delete from kysely_migration where name >= ${'0023_groups'}`.execute(database.db);
    await sql`drop table "groups"`.execute(database.db);
    expect((await migrateToLatest(database)).applied).toContain('0023_groups');
    const groups = await storage.groups.page({ limit: 10 });
    expect(groups.map((g) => [g.name, g.members, g.description])).toEqual([
      ['Ops', 1, null],
      ['dev', 2, null],
    ]);
  });

  it.runIf(name === 'sqlite')(
    'finishes a half-applied 0002_oidc_flows (SQLite runs it outside a transaction)',
    async () => {
      const database = await fresh(create);
      await migrateToLatest(database);
      // As if the process died after 0002's first steps: its record is gone, its column and tables stay
      // (and 0003, which cannot have run before 0002 finished, is not recorded either).
      await sql`delete from kysely_migration where name >= ${'0002_oidc_flows'}`.execute(database.db);
      await sql`drop table login_attempts`.execute(database.db);
      expect(await migrateToLatest(database)).toEqual({
        applied: MIGRATION_NAMES.filter((m) => m >= '0002_oidc_flows'),
      });
      expect(await database.db.selectFrom('login_attempts').selectAll().execute()).toEqual([]);
      await createSqlStorage(database).clients.create(newClient());
    },
  );

  it.runIf(name === 'sqlite')(
    'finishes a half-applied 0003_federation (SQLite runs it outside a transaction)',
    async () => {
      const database = await fresh(create);
      await migrateToLatest(database);
      await sql`delete from kysely_migration where name >= ${'0003_federation'}`.execute(database.db);
      await sql`drop table login_transactions`.execute(database.db);
      expect(await migrateToLatest(database)).toEqual({
        applied: MIGRATION_NAMES.filter((m) => m >= '0003_federation'),
      });
      expect(await database.db.selectFrom('login_transactions').selectAll().execute()).toEqual([]);
      expect(await database.db.selectFrom('identity_providers').selectAll().execute()).toEqual([]);
    },
  );

  it.runIf(name === 'sqlite')(
    'finishes a half-applied 0006_device_authorizations (table there, index missing)',
    async () => {
      const database = await fresh(create);
      await migrateToLatest(database);
      await sql`delete from kysely_migration where name >= ${'0006_device_authorizations'}`.execute(
        database.db,
      );
      await sql`drop index device_authorizations_user_code_unique`.execute(database.db);
      expect(await migrateToLatest(database)).toEqual({
        applied: MIGRATION_NAMES.filter((m) => m >= '0006_device_authorizations'),
      });
      const storage = createSqlStorage(database);
      const record = {
        deviceCodeHash: 'h1',
        userCode: 'BCDFGHJK',
        clientId: 'c',
        scope: [],
        resource: null,
        status: 'pending' as const,
        userId: null,
        authTime: null,
        sessionId: null,
        createdAt: new Date(0),
        expiresAt: new Date(600_000),
        lastPolledAt: null,
        interval: 5,
        consumedAt: null,
      };
      await storage.deviceAuthorizations.create(record);
      await expect(
        storage.deviceAuthorizations.create({ ...record, deviceCodeHash: 'h2' }),
      ).rejects.toMatchObject({
        field: 'userCode',
      });
    },
  );

  it.runIf(name === 'sqlite')(
    'finishes a 0017_device_poll_slow_down whose column went in but whose record did not',
    async () => {
      const database = await fresh(create);
      await migrateToLatest(database);
      await sql`delete from kysely_migration where name >= ${'0017_device_poll_slow_down'}`.execute(
        database.db,
      );
      expect(await migrateToLatest(database)).toEqual({
        applied: MIGRATION_NAMES.filter((m) => m >= '0017_device_poll_slow_down'),
      });
      const row = await database.db.selectFrom('device_authorizations').select('poll_slowed').execute();
      expect(row).toEqual([]);
    },
  );

  it.runIf(name === 'sqlite')(
    'finishes a half-applied 0024_factors (SQLite runs it outside a transaction)',
    async () => {
      const database = await fresh(create);
      await migrateToLatest(database);
      // As if the process died after the first amr column.
      await sql`delete from kysely_migration where name >= ${'0024_factors'}`.execute(database.db);
      await sql`alter table grants drop column amr`.execute(database.db);
      expect(await migrateToLatest(database)).toEqual({
        applied: MIGRATION_NAMES.filter((m) => m >= '0024_factors'),
      });
      expect(await database.db.selectFrom('factors').selectAll().execute()).toEqual([]);
    },
  );

  it.runIf(name === 'sqlite')(
    'finishes a half-applied 0020_audit_event_origin (SQLite runs it outside a transaction)',
    async () => {
      const database = await fresh(create);
      await migrateToLatest(database);
      // As if the process died after the first column.
      await sql`delete from kysely_migration where name >= ${'0020_audit_event_origin'}`.execute(database.db);
      await sql`alter table audit_events drop column trace_id`.execute(database.db);
      expect(await migrateToLatest(database)).toEqual({
        applied: MIGRATION_NAMES.filter((m) => m >= '0020_audit_event_origin'),
      });
      const rows = await database.db.selectFrom('audit_events').select(['request_id', 'trace_id']).execute();
      expect(rows).toEqual([]);
    },
  );

  it.runIf(name === 'sqlite')(
    'finishes a half-applied 0013_grant_upstream (SQLite runs it outside a transaction)',
    async () => {
      const database = await fresh(create);
      await migrateToLatest(database);
      // As if the process died after the first two columns.
      await sql`delete from kysely_migration where name >= ${'0013_grant_upstream'}`.execute(database.db);
      await sql`alter table grants drop column upstream_state`.execute(database.db);
      await sql`alter table grants drop column upstream_validated_at`.execute(database.db);
      expect(await migrateToLatest(database)).toEqual({
        applied: MIGRATION_NAMES.filter((m) => m >= '0013_grant_upstream'),
      });
      const upstream = {
        provider: 'corp',
        subject: 's',
        validatedAt: new Date(1000),
        checkedAt: new Date(1000),
        sealedState: 'v1.a.b',
      };
      const storage = createSqlStorage(database);
      await storage.grants.create({ ...newGrant(), upstream });
      expect((await storage.grants.findById('g-1'))?.upstream).toStrictEqual(upstream);
    },
  );

  it.runIf(name === 'sqlite')(
    'finishes a half-applied 0019_grant_resources (SQLite runs it outside a transaction)',
    async () => {
      const database = await fresh(create);
      await migrateToLatest(database);
      // As if the process died after the grants' column, before the consents'.
      await sql`delete from kysely_migration where name >= ${'0019_grant_resources'}`.execute(database.db);
      await sql`alter table consents drop column resources`.execute(database.db);
      expect(await migrateToLatest(database)).toEqual({
        applied: MIGRATION_NAMES.filter((m) => m >= '0019_grant_resources'),
      });
      const storage = createSqlStorage(database);
      await storage.grants.create({ ...newGrant(), resources: ['kubernetes:prod'] });
      expect((await storage.grants.findById('g-1'))?.resources).toStrictEqual(['kubernetes:prod']);
      const consent = {
        userId: 'u-1',
        clientId: 'c-1',
        scope: ['openid'],
        resources: ['kubernetes:prod'],
        grantedAt: new Date(1000),
      };
      await storage.consents.save(consent);
      expect(await storage.consents.find('u-1', 'c-1')).toStrictEqual(consent);
    },
  );

  it.runIf(name === 'sqlite')(
    'finishes a half-applied 0015_session_upstream (SQLite runs it outside a transaction)',
    async () => {
      const database = await fresh(create);
      await migrateToLatest(database);
      // As if the process died after the sessions' and the codes' columns and two of the devices'.
      await sql`delete from kysely_migration where name >= ${'0015_session_upstream'}`.execute(database.db);
      await sql`alter table device_authorizations drop column upstream_state`.execute(database.db);
      await sql`alter table device_authorizations drop column upstream_validated_at`.execute(database.db);
      expect(await migrateToLatest(database)).toEqual({
        applied: MIGRATION_NAMES.filter((m) => m >= '0015_session_upstream'),
      });
      const upstream = {
        provider: 'corp',
        subject: 's',
        validatedAt: new Date(1000),
        checkedAt: new Date(1000),
        sealedState: 'v1.a.b',
      };
      const storage = createSqlStorage(database);
      await storage.sessions.create({ ...newSession(), upstream });
      expect((await storage.sessions.findById('s-1'))?.upstream).toStrictEqual(upstream);
    },
  );

  it.runIf(name === 'sqlite')(
    'finishes a half-applied 0007_clusters (SQLite runs it outside a transaction)',
    async () => {
      const database = await fresh(create);
      await migrateToLatest(database);
      // As if the process died after the first column: the table and that column stay.
      await sql`delete from kysely_migration where name >= ${'0007_clusters'}`.execute(database.db);
      await sql`alter table authorization_codes drop column resource`.execute(database.db);
      expect(await migrateToLatest(database)).toEqual({
        applied: MIGRATION_NAMES.filter((m) => m >= '0007_clusters'),
      });
      const storage = createSqlStorage(database);
      await storage.apiKeys.create(newApiKey({ cluster: { name: 'prod', audience: 'kubernetes:prod' } }));
      expect((await storage.apiKeys.list())[0]?.cluster).toEqual({
        name: 'prod',
        audience: 'kubernetes:prod',
      });
    },
  );

  it.runIf(name === 'sqlite')(
    'finishes a half-applied 0009_session_activity (SQLite runs it outside a transaction)',
    async () => {
      const database = await fresh(create);
      await migrateToLatest(database);
      // As if the process died after the first columns: they stay, the index is missing.
      await sql`delete from kysely_migration where name >= ${'0009_session_activity'}`.execute(database.db);
      await sql`drop index grants_user_created_idx`.execute(database.db);
      await sql`alter table grants drop column last_used_address`.execute(database.db);
      expect(await migrateToLatest(database)).toEqual({
        applied: MIGRATION_NAMES.filter((m) => m >= '0009_session_activity'),
      });
      const storage = createSqlStorage(database);
      const grant = await storage.grants.create(
        newGrant({ lastUsedAt: new Date(5), lastUsedAddress: '192.0.2.1' }),
      );
      expect(grant).toMatchObject({ lastUsedAt: new Date(5), lastUsedAddress: '192.0.2.1' });
    },
  );

  it('0018_upstream_checked_at starts the check time of every upstream identity at the time it holds; a row without one still re-checks', async () => {
    const database = await fresh(create);
    await migrateToLatest(database);
    const storage = createSqlStorage(database);
    const upstream = {
      provider: 'corp',
      subject: 's',
      validatedAt: new Date(1000),
      checkedAt: new Date(1000),
      sealedState: 'v1.a.b',
    };
    await storage.grants.create({ ...newGrant(), upstream });
    await storage.grants.create({ ...newGrant(), id: 'g-local' });
    await storage.sessions.create({ ...newSession(), upstream });
    // As the tables were before 0018: no check time.
    // (The migrations after it are taken back too: Kysely applies them in order.)
    await sql`delete from kysely_migration where name >= ${'0018_upstream_checked_at'}`.execute(database.db);
    for (const table of ['grants', 'browser_sessions', 'authorization_codes', 'device_authorizations'])
      await sql`alter table ${sql.table(table)} drop column upstream_checked_at`.execute(database.db);
    expect(await migrateToLatest(database)).toEqual({
      applied: MIGRATION_NAMES.filter((m) => m >= '0018_upstream_checked_at'),
    });
    const checked = await database.db
      .selectFrom('grants')
      .select(['id', 'upstream_checked_at'])
      .orderBy('id')
      .execute();
    expect(checked).toEqual([
      { id: 'g-1', upstream_checked_at: 1000 },
      { id: 'g-local', upstream_checked_at: null },
    ]);
    expect((await storage.sessions.findById('s-1'))?.upstream).toStrictEqual(upstream);

    // A grant a replica older than 0018 writes during an upgrade: read and claimed by its vouching time.
    await database.db
      .updateTable('grants')
      .set({ upstream_checked_at: null })
      .where('id', '=', 'g-1')
      .execute();
    expect((await storage.grants.findById('g-1'))?.upstream).toStrictEqual(upstream);
    const claimed = { ...upstream, checkedAt: new Date(2000) };
    expect(await storage.grants.updateUpstream('g-1', claimed, upstream.checkedAt)).toBe(true);
    expect((await storage.grants.findById('g-1'))?.upstream).toStrictEqual(claimed);
  });

  it('returns bigint columns as numbers', async () => {
    const database = await fresh(create);
    await migrateToLatest(database);
    await createSqlStorage(database).users.create(newUser());
    const row = await database.db
      .selectFrom('users')
      .select(['created_at', 'disabled'])
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ created_at: Date.parse('2026-01-02T03:04:05.678Z'), disabled: 0 });
  });

  it('closes idempotently', async () => {
    const database = await fresh(create);
    await database.close();
    await database.close();
  });
});

describe('openDatabase', () => {
  it.each([
    'mysql://root:hunter2@db.example.com/idgate',
    'root:hunter2@db.example.com/idgate',
    'hunter2',
    'file:///var/lib/hunter2.db',
  ])('rejects %s with the accepted forms and without the password', async (url) => {
    const error = await openDatabase(url).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(Error);
    const message = (error as Error).message;
    expect(message).toContain('Unsupported database URL');
    expect(message).toContain(
      'sqlite:./relative/path.db, sqlite:/absolute/path.db, sqlite::memory:, postgres://',
    );
    expect(message).not.toContain('hunter2');
  });

  it('names only the scheme of an unsupported URL', async () => {
    await expect(openDatabase('mysql://root:hunter2@db/idgate')).rejects.toThrow('"mysql:"');
  });

  it('rejects a sqlite URL without a path, and the ambiguous sqlite:// form', async () => {
    await expect(openDatabase('sqlite:')).rejects.toThrow('names no file');
    await expect(openDatabase('sqlite://host/idgate.db')).rejects.toThrow('takes a path, not a host');
  });

  it('does not repeat the password when PostgreSQL is unreachable', async () => {
    const error = await openDatabase('postgres://idgate:hunter2@127.0.0.1:1/idgate').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((error as Error).message).toContain('Cannot connect to PostgreSQL at 127.0.0.1:1/idgate');
    // The operator reads the driver's own words, not what a client would be answered.
    expect((error as Error).message).toContain('ECONNREFUSED');
    expect((error as Error).message).not.toContain('hunter2');
  });

  it('creates the missing parent folders of a SQLite file and sets the pragmas', async () => {
    const file = join(tempDir(), 'a', 'b', 'idgate.db');
    const database = await open(`sqlite:${file}`);
    expect(database.dialect).toBe('sqlite');
    expect(existsSync(file)).toBe(true);
    const pragma = async (name: string) =>
      Object.values((await sql.raw(`pragma ${name}`).execute(database.db)).rows[0] as object)[0];
    expect(await pragma('journal_mode')).toBe('wal');
    expect(await pragma('foreign_keys')).toBe(1);
    expect(await pragma('busy_timeout')).toBe(5000);
    expect(await pragma('synchronous')).toBe(1);
  });

  it('resolves a relative SQLite path against the working directory', async () => {
    const file = join(tempDir(), 'rel', 'idgate.db');
    const url = `sqlite:./${relative(process.cwd(), file)}`;
    const database = await open(url);
    await migrateToLatest(database);
    expect(existsSync(file)).toBe(true);
  });

  it('opens an in-memory SQLite database', async () => {
    const database = await open('sqlite::memory:');
    await migrateToLatest(database);
    const storage = createSqlStorage(database);
    await storage.users.create(newUser());
    expect(await storage.users.count()).toBe(1);
  });

  it.runIf(process.env.IDGATE_TEST_DATABASE_URL)('leaves the global pg bigint parser alone', async () => {
    await open(process.env.IDGATE_TEST_DATABASE_URL ?? '');
    expect(pg.types.getTypeParser(20, 'text')('9007199254740993')).toBe('9007199254740993');
  });

  it.runIf(process.env.IDGATE_TEST_DATABASE_URL)('accepts the postgresql:// scheme', async () => {
    const url = (process.env.IDGATE_TEST_DATABASE_URL ?? '').replace(/^postgres:\/\//, 'postgresql://');
    const database = await open(url);
    expect(database.dialect).toBe('postgres');
    expect((await sql<{ one: number }>`select 1 as one`.execute(database.db)).rows).toEqual([{ one: 1 }]);
  });
});
