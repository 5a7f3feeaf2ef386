import type { IdentityProviderRecord, IdentityProviderRepository } from '@idgate/core';
import type { Kysely, Selectable } from 'kysely';
import type { IdentityProvidersTable, Schema } from '../schema.js';
import { fromFlag, fromJsonObject, toDate, toFlag, toMs } from './columns.js';
import {
  deleteRows,
  findRecord,
  inByteOrder,
  insertRecordReturning,
  type RepositoryContext,
  type UniqueTable,
  updateRecord,
} from './support.js';

const PROVIDERS: UniqueTable<'identity_providers', IdentityProviderRecord> = {
  name: 'identity_providers',
  toRecord: toProvider,
  conflicts: { identity_providers_pkey: 'name', 'identity_providers.name': 'name' },
  conflictField: 'name',
};

export function createIdentityProviderRepository(ctx: RepositoryContext): IdentityProviderRepository {
  const { db } = ctx;
  // Names are stored lower-cased (a check constraint holds the table to it), so the primary key
  // makes them unique regardless of case and a lookup folds only its argument.
  const fold = (name: string) => name.toLowerCase();

  /** Both deletes land or neither: in the caller's transaction, else in one of their own. */
  const inOneTransaction = <T>(work: (trx: Kysely<Schema>) => Promise<T>): Promise<T> =>
    ctx.inTransaction ? work(db) : db.transaction().execute(work);

  return {
    async create(provider) {
      return insertRecordReturning(ctx, PROVIDERS, {
        name: fold(provider.name),
        type: provider.type,
        config: JSON.stringify(provider.config),
        disabled: toFlag(provider.disabled),
        created_at: toMs(provider.createdAt),
        updated_at: toMs(provider.updatedAt),
      });
    },

    async findByName(name) {
      return findRecord(db, PROVIDERS, 'name', fold(name));
    },

    async list() {
      const rows = await db
        .selectFrom('identity_providers')
        .selectAll()
        .orderBy(inByteOrder(ctx, 'name'))
        .execute();
      return rows.map(toProvider);
    },

    async setDisabled(name, disabled, at) {
      const set = { disabled: toFlag(disabled), updated_at: toMs(at) };
      return updateRecord(db, PROVIDERS, 'name', fold(name), set);
    },

    async update(name, changes) {
      return updateRecord(db, PROVIDERS, 'name', fold(name), {
        config: JSON.stringify(changes.config),
        disabled: toFlag(changes.disabled),
        updated_at: toMs(changes.updatedAt),
      });
    },

    async remove(name) {
      const folded = fold(name);
      return inOneTransaction(async (trx) => {
        // Identities of a provider that is not stored (one of the configuration file) are kept.
        if ((await deleteRows(trx, PROVIDERS, 'name', folded)) === 0) return false;
        await trx.deleteFrom('linked_identities').where('provider', '=', folded).execute();
        return true;
      });
    },
  };
}

function toProvider(row: Selectable<IdentityProvidersTable>): IdentityProviderRecord {
  return {
    name: row.name,
    type: row.type as IdentityProviderRecord['type'],
    config: fromJsonObject(row.config, 'identity_providers.config'),
    disabled: fromFlag(row.disabled),
    createdAt: toDate(row.created_at),
    updatedAt: toDate(row.updated_at),
  };
}
