import { type Kysely, PostgresAdapter, sql } from 'kysely';

// Groups as objects of their own: a row per group, which exists with no member too. Members stay
// on the users (`users.groups`, JSON text), so a token review still reads one row. (Which
// declaration manager owns a group is in `declared_objects`, as for every declared object.)
// Every group a user is in at the time of the migration gets a row. Instants in epoch ms.

export async function up(db: Kysely<unknown>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.schema
    .createTable('groups')
    .ifNotExists()
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('description', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  const now = Date.now();
  const members = postgres
    ? sql`select distinct g.name from users cross join lateral jsonb_array_elements_text(users.groups::jsonb) as g(name)`
    : sql`select distinct g.value from users, json_each(users.groups) as g`;
  // `where true` keeps SQLite from reading `on conflict` as part of the select's join.
  await sql`insert into "groups" (name, description, created_at, updated_at)
    select m.*, null, ${now}, ${now} from (${members}) as m where true
    on conflict (name) do nothing`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('groups').ifExists().execute();
}
