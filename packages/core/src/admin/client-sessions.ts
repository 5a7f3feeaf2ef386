import {
  type EndedSessions,
  GrantId,
  type GrantInfo,
  type RevokedGrants,
  type SessionInfo,
} from '@idgate/schema';
import { recordAdminChange } from '../audit/admin.js';
import { publishGrantRevocations } from '../grants/revoke-grant.js';
import type { ClientRecord, GrantRecord } from '../model.js';
import type { Storage } from '../ports/storage.js';
import { AdminError } from './errors.js';
import { nowOf } from './ports.js';
import { recordAdminRevocation, revocationContext } from './revocations.js';
import {
  type AdminPage,
  checkId,
  clientNames,
  type Ports,
  pageOf,
  pageRequest,
  sessionInfos,
} from './sessions.js';
import { grantInfoView } from './views.js';

type Reads = Pick<Ports, 'storage' | 'clock'>;

async function findClient(storage: Storage, clientId: string): Promise<ClientRecord> {
  // Longer than any client id can be: no need to ask storage.
  const client = clientId.length > 256 ? undefined : await storage.clients.findById(clientId);
  if (client === undefined)
    throw new AdminError('not_found', 'client', `no client ${clientId}`, { key: clientId });
  return client;
}

/** Grants revoked together, recorded per user (each event names one subject). */
async function recordByUser(
  tx: Storage,
  ports: Ports,
  client: ClientRecord,
  operation: 'revoke' | 'revoke-all' | 'end-all',
  revoked: readonly GrantRecord[],
): Promise<void> {
  const kind = operation === 'end-all' ? 'session' : 'grant';
  // The change itself is recorded once, about the client; the grants it revoked per user.
  await recordAdminChange(tx, ports, {
    objectKind: kind,
    objectId: operation === 'revoke' ? (revoked[0]?.id ?? client.clientId) : client.clientId,
    action: 'updated',
    operation: `${operation}-of-client`,
    clientId: client.clientId,
  });
  const byUser = new Map<string, GrantRecord[]>();
  for (const grant of revoked) byUser.set(grant.userId, [...(byUser.get(grant.userId) ?? []), grant]);
  for (const [userId, grants] of byUser) await recordAdminRevocation(tx, ports, userId, null, grants);
}

/**
 * One page of the live browser sessions that signed in to a client (a grant of the client was
 * made in them), oldest first, shown as a user's are.
 * @param query the `?limit=&cursor=` of the listing, as sent.
 * @throws AdminError `not_found` for an unknown client; `invalid_input` for a bad limit or cursor.
 * @example const { items } = await listClientSessions(ports, 'cl_web');
 */
export async function listClientSessions(
  ports: Reads,
  clientId: string,
  query: unknown = {},
): Promise<AdminPage<SessionInfo & { userId: string }>> {
  const page = pageRequest(query, 'session');
  const client = await findClient(ports.storage, clientId);
  const now = nowOf(ports);
  const { records, nextCursor } = await pageOf(page, (p) =>
    ports.storage.sessions.listLiveByClient(client.clientId, now, p),
  );
  const infos = await sessionInfos(ports.storage, records);
  return { items: infos.map((info, i) => ({ ...info, userId: records[i]?.userId ?? '' })), nextCursor };
}

/**
 * Ends every live browser session that signed in to a client — the browsers are signed out of
 * every application, as ending a user's session does — and revokes the grants made in them.
 * @throws AdminError `not_found` for an unknown client.
 * @example const { ended, revokedGrants } = await endClientSessions(ports, 'cl_web');
 */
export async function endClientSessions(ports: Ports, clientId: string): Promise<EndedSessions> {
  const client = await findClient(ports.storage, clientId);
  const now = nowOf(ports);
  return ports.storage.transaction(async (tx) => {
    const ids: string[] = [];
    let after: { createdAt: Date; id: string } | undefined;
    for (;;) {
      const page = await tx.sessions.listLiveByClient(client.clientId, now, {
        limit: 500,
        ...(after === undefined ? {} : { after }),
      });
      ids.push(...page.map((session) => session.id));
      const last = page.at(-1);
      if (page.length < 500 || last === undefined) break;
      after = { createdAt: last.createdAt, id: last.id };
    }
    const revoked: GrantRecord[] = [];
    let ended = 0;
    for (const id of ids) {
      if (await tx.sessions.end(id, now)) ended++;
      revoked.push(...(await tx.grants.revokeBySession(id, now)));
    }
    await publishGrantRevocations(revocationContext(tx, ports), revoked);
    await recordByUser(tx, ports, client, 'end-all', revoked);
    return { ended, revokedGrants: revoked.length };
  });
}

/**
 * One page of a client's live grants (neither revoked nor expired), oldest first.
 * @param query the `?limit=&cursor=` of the listing, as sent.
 * @throws AdminError `not_found` for an unknown client; `invalid_input` for a bad limit or cursor.
 * @example const { items } = await listClientGrants(ports, 'cl_web');
 */
export async function listClientGrants(
  ports: Reads,
  clientId: string,
  query: unknown = {},
): Promise<AdminPage<GrantInfo & { userId: string }>> {
  const page = pageRequest(query, 'grant');
  const client = await findClient(ports.storage, clientId);
  const now = nowOf(ports);
  const { records, nextCursor } = await pageOf(page, (p) =>
    ports.storage.grants.listLiveByClient(client.clientId, now, p),
  );
  const names = await clientNames(ports.storage, [client.clientId]);
  return {
    items: records.map((grant) => ({
      ...grantInfoView(grant, names.get(grant.clientId) ?? null),
      userId: grant.userId,
    })),
    nextCursor,
  };
}

/**
 * Revokes one grant of a client: its refresh tokens stop working at once, and its access tokens
 * are refused on every replica.
 * @throws AdminError `invalid_input` for a malformed id; `not_found` for an unknown client, or a
 * grant that is not a live one of this client.
 * @example await revokeClientGrant(ports, 'cl_web', grantId);
 */
export async function revokeClientGrant(ports: Ports, clientId: string, grantId: string): Promise<void> {
  const id = checkId(GrantId, grantId, 'grant');
  const client = await findClient(ports.storage, clientId);
  const grant = await ports.storage.grants.findById(id);
  const now = nowOf(ports);
  const notFound = () =>
    new AdminError('not_found', 'grant', `no grant ${id} of client ${client.clientId}`, { key: id });
  if (grant === undefined || grant.clientId !== client.clientId || grant.revokedAt !== null) throw notFound();
  if (grant.expiresAt.getTime() <= now.getTime()) throw notFound();
  await ports.storage.transaction(async (tx) => {
    if (!(await tx.grants.revoke(id, now))) throw notFound();
    const revoked = [{ ...grant, revokedAt: now }];
    await publishGrantRevocations(revocationContext(tx, ports), revoked);
    await recordByUser(tx, ports, client, 'revoke', revoked);
  });
}

/**
 * Revokes every grant of a client: every user must sign in to it again; its own
 * client_credentials tokens are not grants (a not-before of the client ends them).
 * @returns how many live grants were revoked.
 * @throws AdminError `not_found` for an unknown client.
 * @example const { revoked } = await revokeAllClientGrants(ports, 'cl_web');
 */
export async function revokeAllClientGrants(ports: Ports, clientId: string): Promise<RevokedGrants> {
  const client = await findClient(ports.storage, clientId);
  const now = nowOf(ports);
  const revoked = await ports.storage.transaction(async (tx) => {
    const grants = await tx.grants.revokeByClient(client.clientId, now);
    await publishGrantRevocations(revocationContext(tx, ports), grants);
    await recordByUser(tx, ports, client, 'revoke-all', grants);
    return grants;
  });
  return { revoked: revoked.filter((grant) => grant.expiresAt.getTime() > now.getTime()).length };
}
