import type { ClientRecord, ClientRepository } from '@idgate/core';
import type { GrantType } from '@idgate/schema';
import type { Selectable } from 'kysely';
import type { OAuthClientsTable } from '../schema.js';
import { fromFlag, fromJsonArray, toDate, toDateOrNull, toFlag, toMs, toMsOrNull } from './columns.js';
import {
  countRows,
  deleteRows,
  findRecord,
  insertRecordReturning,
  keysetPage,
  listInPageOrder,
  type RepositoryContext,
  type UniqueTable,
  updateRows,
} from './support.js';

const CLIENTS: UniqueTable<'oauth_clients', ClientRecord> = {
  name: 'oauth_clients',
  toRecord: toClient,
  conflicts: { oauth_clients_pkey: 'clientId', 'oauth_clients.client_id': 'clientId' },
  conflictField: 'clientId',
};

export function createClientRepository(ctx: RepositoryContext): ClientRepository {
  const { db } = ctx;
  return {
    async create(client) {
      return insertRecordReturning(ctx, CLIENTS, {
        client_id: client.clientId,
        ...settingColumns(client),
        created_at: toMs(client.createdAt),
      });
    },

    findById: (clientId) => findRecord(db, CLIENTS, 'client_id', clientId),

    // The id breaks ties so clients created in the same millisecond keep a stable order.
    list: () => listInPageOrder(ctx, CLIENTS, 'client_id'),

    async listPage(limit, after) {
      // Keyset pagination on (created_at, client_id), which the 0010 index serves.
      const page =
        after === undefined
          ? { limit }
          : { limit, after: { createdAt: after.createdAt, id: after.clientId } };
      return keysetPage(ctx, CLIENTS, db.selectFrom('oauth_clients').selectAll(), page, 'client_id');
    },

    async update(client) {
      return (await updateRows(db, CLIENTS, 'client_id', client.clientId, settingColumns(client))) > 0;
    },

    async setAudiences(clientId, audiences) {
      const set = { audiences: JSON.stringify(audiences) };
      return (await updateRows(db, CLIENTS, 'client_id', clientId, set)) > 0;
    },

    async remove(clientId) {
      return (await deleteRows(db, CLIENTS, 'client_id', clientId)) > 0;
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
    require_mfa: toFlag(client.requireMfa ?? false),
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
    // Only when set, as the record leaves it out for false.
    ...(fromFlag(row.require_mfa) ? { requireMfa: true } : {}),
    createdAt: toDate(row.created_at),
  };
}
