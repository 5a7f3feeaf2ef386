import type { ClientRecord, ClientRepository } from '@idgate/core';
import type { GrantType } from '@idgate/schema';
import type { Selectable } from 'kysely';
import type { OAuthClientsTable } from '../schema.js';
import { fromFlag, fromJsonArray, toDate, toDateOrNull, toFlag, toMs, toMsOrNull } from './columns.js';
import {
  type ConflictFields,
  countRows,
  inByteOrder,
  insertRowReturning,
  keysetPage,
  type RepositoryContext,
} from './support.js';

const CONFLICTS: ConflictFields = {
  oauth_clients_pkey: 'clientId',
  'oauth_clients.client_id': 'clientId',
};

export function createClientRepository(ctx: RepositoryContext): ClientRepository {
  const { db } = ctx;
  return {
    async create(client) {
      const row = await insertRowReturning(ctx, 'oauth_clients', CONFLICTS, 'clientId', {
        client_id: client.clientId,
        ...settingColumns(client),
        created_at: toMs(client.createdAt),
      });
      return toClient(row);
    },

    async findById(clientId) {
      const row = await db
        .selectFrom('oauth_clients')
        .selectAll()
        .where('client_id', '=', clientId)
        .executeTakeFirst();
      return row && toClient(row);
    },

    async list() {
      // The id breaks ties so clients created in the same millisecond keep a stable order.
      const rows = await db
        .selectFrom('oauth_clients')
        .selectAll()
        .orderBy('created_at')
        .orderBy(inByteOrder(ctx, 'client_id'))
        .execute();
      return rows.map(toClient);
    },

    async listPage(limit, after) {
      // Keyset pagination on (created_at, client_id), which the 0010 index serves.
      const page =
        after === undefined
          ? { limit }
          : { limit, after: { createdAt: after.createdAt, id: after.clientId } };
      const rows = await keysetPage(
        ctx,
        db.selectFrom('oauth_clients').selectAll(),
        page,
        'client_id',
      ).execute();
      return rows.map(toClient);
    },

    async update(client) {
      const result = await db
        .updateTable('oauth_clients')
        .set(settingColumns(client))
        .where('client_id', '=', client.clientId)
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    async setAudiences(clientId, audiences) {
      const result = await db
        .updateTable('oauth_clients')
        .set({ audiences: JSON.stringify(audiences) })
        .where('client_id', '=', clientId)
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    async remove(clientId) {
      const result = await db
        .deleteFrom('oauth_clients')
        .where('client_id', '=', clientId)
        .executeTakeFirst();
      return result.numDeletedRows > 0n;
    },

    count: () => countRows(db, 'oauth_clients'),
  };
}

/** The columns of a client's settings and secrets: all but its id and creation. */
function settingColumns(client: ClientRecord) {
  return {
    name: client.name,
    secret_hash: client.secretHash,
    is_public: toFlag(client.public),
    trusted: toFlag(client.trusted),
    redirect_uris: JSON.stringify(client.redirectUris),
    post_logout_redirect_uris: JSON.stringify(client.postLogoutRedirectUris),
    grant_types: JSON.stringify(client.grantTypes),
    scopes: JSON.stringify(client.scopes),
    audiences: JSON.stringify(client.audiences),
    access_token_ttl: client.accessTokenTtl,
    refresh_token_ttl: client.refreshTokenTtl,
    previous_secret_hash: client.previousSecretHash ?? null,
    previous_secret_expires_at: toMsOrNull(client.previousSecretExpiresAt ?? null),
  };
}

function toClient(row: Selectable<OAuthClientsTable>): ClientRecord {
  return {
    clientId: row.client_id,
    name: row.name,
    secretHash: row.secret_hash,
    public: fromFlag(row.is_public),
    trusted: fromFlag(row.trusted),
    redirectUris: fromJsonArray(row.redirect_uris, 'oauth_clients.redirect_uris'),
    postLogoutRedirectUris: fromJsonArray(
      row.post_logout_redirect_uris,
      'oauth_clients.post_logout_redirect_uris',
    ),
    grantTypes: fromJsonArray<GrantType>(row.grant_types, 'oauth_clients.grant_types'),
    scopes: fromJsonArray(row.scopes, 'oauth_clients.scopes'),
    audiences: fromJsonArray(row.audiences, 'oauth_clients.audiences'),
    accessTokenTtl: Number(row.access_token_ttl),
    refreshTokenTtl: Number(row.refresh_token_ttl),
    previousSecretHash: row.previous_secret_hash,
    previousSecretExpiresAt: toDateOrNull(row.previous_secret_expires_at),
    createdAt: toDate(row.created_at),
  };
}
