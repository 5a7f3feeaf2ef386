import type { DeclaredObjectRecord, DeclaredObjectRepository } from '@idgate/core';
import type { DeclaredKind } from '@idgate/schema';
import type { Selectable } from 'kysely';
import type { DeclaredObjectsTable } from '../schema.js';
import { toDate, toMs } from './columns.js';
import { inByteOrder, type RepositoryContext } from './support.js';

export function createDeclaredObjectRepository(ctx: RepositoryContext): DeclaredObjectRepository {
  const { db } = ctx;
  return {
    async list() {
      const rows = await db
        .selectFrom('declared_objects')
        .selectAll()
        .orderBy(inByteOrder(ctx, 'kind'))
        .orderBy(inByteOrder(ctx, 'name'))
        .execute();
      return rows.map(toRecord);
    },

    async put(record) {
      const row = {
        kind: record.kind,
        name: record.name,
        object_id: record.objectId,
        manager: record.manager,
        secrets: record.secrets,
        applied_hash: record.appliedHash,
        applied_at: toMs(record.appliedAt),
      };
      await db
        .insertInto('declared_objects')
        .values(row)
        .onConflict((oc) =>
          oc.columns(['kind', 'name']).doUpdateSet({
            object_id: row.object_id,
            manager: row.manager,
            secrets: row.secrets,
            applied_hash: row.applied_hash,
            applied_at: row.applied_at,
          }),
        )
        .execute();
    },

    async remove(kind, name) {
      const result = await db
        .deleteFrom('declared_objects')
        .where('kind', '=', kind)
        .where('name', '=', name)
        .executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
  };
}

function toRecord(row: Selectable<DeclaredObjectsTable>): DeclaredObjectRecord {
  return {
    kind: row.kind as DeclaredKind,
    name: row.name,
    objectId: row.object_id,
    manager: row.manager,
    secrets: row.secrets,
    appliedHash: row.applied_hash,
    appliedAt: toDate(row.applied_at),
  };
}
