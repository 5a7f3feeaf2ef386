import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { type Generated, Kysely, SqliteDialect, sql } from 'kysely';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { cachingStatements } from '../../src/storage/statement-cache.js';

interface Db {
  items: { id: Generated<number>; name: string };
}

describe('cachingStatements (SQLite)', () => {
  const opened: { close(): void }[] = [];
  afterEach(() => {
    for (const db of opened.splice(0)) db.close();
  });

  function open(max?: number) {
    const sqlite = new SqliteDatabase(':memory:');
    sqlite.exec('create table items (id integer primary key, name text not null)');
    const prepare = vi.spyOn(sqlite, 'prepare');
    const database = cachingStatements(sqlite, max);
    opened.push(database);
    return { sqlite, prepare, database };
  }

  it('prepares a SQL text once and answers every later query of it with that statement', () => {
    const { prepare, database } = open();
    const insert = database.prepare('insert into items (name) values (?)');
    for (let i = 0; i < 50; i++) expect(database.prepare('insert into items (name) values (?)')).toBe(insert);
    for (let i = 0; i < 50; i++) insert.run([`item ${i}`]);
    const select = database.prepare('select count(*) as n from items');
    expect(select.all([])).toEqual([{ n: 50 }]);
    expect(prepare).toHaveBeenCalledTimes(2);
  });

  it('forgets the least recently used text beyond its size', () => {
    const { prepare, database } = open(2);
    const a = database.prepare('select 1');
    database.prepare('select 2');
    expect(database.prepare('select 1')).toBe(a); // now the most recent: select 2 goes next
    database.prepare('select 3');
    expect(prepare).toHaveBeenCalledTimes(3);
    expect(database.prepare('select 1')).toBe(a);
    expect(prepare).toHaveBeenCalledTimes(3);
    database.prepare('select 2');
    expect(prepare).toHaveBeenCalledTimes(4);
  });

  it('hands a statement still being iterated to no other query: that one gets a fresh statement', () => {
    const { database } = open();
    const insert = database.prepare('insert into items (name) values (?)');
    for (const name of ['a', 'b', 'c']) insert.run([name]);
    const text = 'select name from items order by id';
    const streaming = database.prepare(text);
    const rows = streaming.iterate([]);
    expect(rows.next().value).toEqual({ name: 'a' });
    const other = database.prepare(text);
    expect(other).not.toBe(streaming);
    expect(other.all([])).toEqual([{ name: 'a' }, { name: 'b' }, { name: 'c' }]);
    expect([...rows]).toEqual([{ name: 'b' }, { name: 'c' }]);
  });

  it('under Kysely: a repeated query prepares once; a query after a schema change sees the new column', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'idgate-statements-'));
    try {
      const sqlite = new SqliteDatabase(join(dir, 'db.sqlite'));
      const prepare = vi.spyOn(sqlite, 'prepare');
      const db = new Kysely<Db>({ dialect: new SqliteDialect({ database: cachingStatements(sqlite) }) });
      await sql`create table items (id integer primary key, name text not null)`.execute(db);
      for (let i = 0; i < 20; i++)
        await db
          .insertInto('items')
          .values({ name: `n${i}` })
          .execute();
      for (let i = 0; i < 20; i++) {
        const row = await db
          .selectFrom('items')
          .selectAll()
          .where('id', '=', i + 1)
          .executeTakeFirstOrThrow();
        expect(row).toEqual({ id: i + 1, name: `n${i}` });
      }
      // create, insert, select: three texts for 41 queries.
      expect(prepare).toHaveBeenCalledTimes(3);
      await db.transaction().execute(async (tx) => {
        await tx.insertInto('items').values({ name: 'in a transaction' }).execute();
      });
      await sql`alter table items add column note text`.execute(db);
      const rows = await sql<{
        id: number;
        name: string;
        note: string | null;
      }>`select * from items where id = ${21}`.execute(db);
      expect(rows.rows).toEqual([{ id: 21, name: 'in a transaction', note: null }]);
      const again = await db.selectFrom('items').selectAll().where('id', '=', 21).executeTakeFirstOrThrow();
      expect(again).toEqual({ id: 21, name: 'in a transaction', note: null });
      await db.destroy();
      expect(sqlite.open).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
