import {
  type EndedSessions,
  GrantId,
  type GrantInfo,
  PageQuery,
  type RevokedGrants,
  SessionId,
  type SessionInfo,
} from '@idgate/schema';
import { publishGrantRevocations } from '../grants/revoke-grant.js';
import { base64url, fromBase64url, utf8 } from '../internal/encoding.js';
import type { BrowserSessionRecord, GrantRecord } from '../model.js';
import type { PageRequest } from '../ports/oidc-storage.js';
import type { Storage } from '../ports/storage.js';
import { AdminError, type AdminObject, parseAdminInput } from './errors.js';
import { type AdminPorts, nowOf } from './ports.js';
import { recordAdminRevocation, revocationContext } from './revocations.js';
import { findUser } from './users.js';
import { grantInfoView, sessionInfoView } from './views.js';

export type Ports = Pick<AdminPorts, 'storage' | 'clock' | 'keyPolicy' | 'auditActor'>;

/** One page of a listing: its items and the cursor of the next page (null on the last). */
export interface AdminPage<T> {
  items: T[];
  nextCursor: string | null;
}

/**
 * The `?limit=&cursor=` of a listing of `object`s: `query` as the query string sent it, checked
 * against `PageQuery` (limit 1–500, default 100).
 * @throws AdminError `invalid_input` naming `limit` or `cursor`.
 */
export function pageRequest(query: unknown, object: AdminObject): PageRequest {
  const { limit, cursor } = parseAdminInput(PageQuery, query ?? {}, object);
  return cursor === undefined ? { limit } : { limit, after: decodeCursor(cursor, object) };
}

// The cursor is the sort key of the page's last item, (createdAt, id), as base64url JSON.
function encodeCursor(record: { createdAt: Date; id: string }): string {
  return base64url(utf8(JSON.stringify([record.createdAt.getTime(), record.id])));
}

function decodeCursor(cursor: string, object: AdminObject): { createdAt: Date; id: string } {
  const refused = () =>
    new AdminError('invalid_input', object, 'cursor must be the nextCursor of the page before');
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw refused();
  let key: unknown;
  try {
    key = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(fromBase64url(cursor)));
  } catch {
    throw refused();
  }
  if (!Array.isArray(key) || key.length !== 2) throw refused();
  const [ms, id] = key as [unknown, unknown];
  if (typeof ms !== 'number' || !Number.isSafeInteger(ms) || ms < 0) throw refused();
  if (typeof id !== 'string' || !SessionId.safeParse(id).success) throw refused();
  return { createdAt: new Date(ms), id };
}

/** Asks for one item more than the page holds, to know whether there is a next page. */
export async function pageOf<R extends { createdAt: Date; id: string }>(
  page: PageRequest,
  load: (page: PageRequest) => Promise<R[]>,
): Promise<{ records: R[]; nextCursor: string | null }> {
  const records = await load({ ...page, limit: page.limit + 1 });
  if (records.length <= page.limit) return { records, nextCursor: null };
  const shown = records.slice(0, page.limit);
  return { records: shown, nextCursor: encodeCursor(shown[shown.length - 1] as R) };
}

/** The names of these clients (null for a client that is gone). */
export async function clientNames(
  storage: Storage,
  clientIds: Iterable<string>,
): Promise<Map<string, string | null>> {
  const names = new Map<string, string | null>();
  for (const clientId of new Set(clientIds)) {
    names.set(clientId, (await storage.clients.findById(clientId))?.name ?? null);
  }
  return names;
}

export function checkId(schema: typeof SessionId, id: string, object: 'session' | 'grant'): string {
  return parseAdminInput(schema, id, object, { label: () => 'id' });
}

/**
 * One page of a user's live browser sessions, oldest first: when each signed in, when it last
 * signed the browser in to an application, where from, and to which applications.
 * @param query the `?limit=&cursor=` of the listing, as sent.
 * @throws AdminError `not_found` for an unknown user; `invalid_input` for a bad limit or cursor.
 * @example const { items, nextCursor } = await listUserSessions(ports, 'alice', { limit: '50' });
 */
export async function listUserSessions(
  ports: Pick<AdminPorts, 'storage' | 'clock'>,
  username: string,
  query: unknown = {},
): Promise<AdminPage<SessionInfo>> {
  const page = pageRequest(query, 'session');
  const { storage } = ports;
  const user = await findUser(storage, username);
  const now = nowOf(ports);
  const { records, nextCursor } = await pageOf(page, (p) => storage.sessions.listLiveByUser(user.id, now, p));
  return { items: await sessionInfos(storage, records), nextCursor };
}

/** Sessions as listed: when each was last seen and the applications it signed in to. */
export async function sessionInfos(
  storage: Storage,
  records: readonly BrowserSessionRecord[],
): Promise<SessionInfo[]> {
  const activity = await storage.grants.sessionActivity(records.map((session) => session.id));
  const names = await clientNames(
    storage,
    activity.map((a) => a.clientId),
  );
  return records.map((session) => {
    const mine = activity
      .filter((a) => a.sessionId === session.id)
      .sort((a, b) => a.lastGrantAt.getTime() - b.lastGrantAt.getTime());
    const lastSeenAt = mine.reduce(
      (latest, a) => (a.lastGrantAt.getTime() > latest.getTime() ? a.lastGrantAt : latest),
      session.createdAt,
    );
    const clients = mine.map((a) => ({ clientId: a.clientId, name: names.get(a.clientId) ?? null }));
    return sessionInfoView(session, lastSeenAt, clients);
  });
}

/**
 * Ends a user's browser session (the browser is signed out at its next request) and revokes
 * every grant made in it, publishing their revocation so that every replica refuses their access
 * tokens at once and their refresh tokens stop working.
 * @returns how many grants were revoked.
 * @throws AdminError `invalid_input` for a malformed id; `not_found` for an unknown user, or a
 * session that is not a live one of this user.
 * @example await endUserSession(ports, 'alice', '0b6f7c2e-7d1a-4c53-9d7e-2f1c4b8a9e10');
 */
export async function endUserSession(
  ports: Ports,
  username: string,
  sessionId: string,
): Promise<{ revokedGrants: number }> {
  const id = checkId(SessionId, sessionId, 'session');
  const { storage } = ports;
  const user = await findUser(storage, username);
  const session = await storage.sessions.findById(id);
  const now = nowOf(ports);
  const notFound = () =>
    new AdminError('not_found', 'session', `no session ${id} of user ${user.username}`, { key: id });
  if (session === undefined || session.userId !== user.id || session.endedAt !== null) throw notFound();
  if (session.expiresAt.getTime() <= now.getTime()) throw notFound();
  return ports.storage.transaction(async (tx) => {
    // Ended first: a concurrent end is answered as not found, once.
    if (!(await tx.sessions.end(id, now))) throw notFound();
    const revoked = await tx.grants.revokeBySession(id, now);
    await publishGrantRevocations(revocationContext(tx, ports), revoked);
    const change = { objectKind: 'session', objectId: id, operation: 'end' } as const;
    await recordAdminRevocation(tx, ports, user.id, change, revoked);
    return { revokedGrants: revoked.length };
  });
}

/**
 * Ends every live browser session of a user and revokes the grants made in them (see
 * {@link endUserSession}); grants made outside a browser (password grant, kubectl's device flow
 * from another browser) stay.
 * @throws AdminError `not_found` for an unknown user.
 * @example const { ended, revokedGrants } = await endAllUserSessions(ports, 'alice');
 */
export async function endAllUserSessions(ports: Ports, username: string): Promise<EndedSessions> {
  const { storage } = ports;
  const user = await findUser(storage, username);
  const now = nowOf(ports);
  return ports.storage.transaction(async (tx) => {
    const ended = await tx.sessions.endByUser(user.id, now);
    const revoked: GrantRecord[] = [];
    for (const id of ended) revoked.push(...(await tx.grants.revokeBySession(id, now)));
    await publishGrantRevocations(revocationContext(tx, ports), revoked);
    const change = { objectKind: 'session', objectId: user.id, operation: 'end-all' } as const;
    await recordAdminRevocation(tx, ports, user.id, change, revoked);
    return { ended: ended.length, revokedGrants: revoked.length };
  });
}

/**
 * One page of a user's live grants (neither revoked nor expired), oldest first: the client,
 * scopes, and the time and address of the latest token request on each.
 * @param query the `?limit=&cursor=` of the listing, as sent.
 * @throws AdminError `not_found` for an unknown user; `invalid_input` for a bad limit or cursor.
 * @example const { items } = await listUserGrants(ports, 'alice');
 */
export async function listUserGrants(
  ports: Pick<AdminPorts, 'storage' | 'clock'>,
  username: string,
  query: unknown = {},
): Promise<AdminPage<GrantInfo>> {
  const page = pageRequest(query, 'grant');
  const { storage } = ports;
  const user = await findUser(storage, username);
  const now = nowOf(ports);
  const { records, nextCursor } = await pageOf(page, (p) => storage.grants.listLiveByUser(user.id, now, p));
  const names = await clientNames(
    storage,
    records.map((grant) => grant.clientId),
  );
  return {
    items: records.map((grant) => grantInfoView(grant, names.get(grant.clientId) ?? null)),
    nextCursor,
  };
}

/**
 * Revokes a grant of a user: its refresh tokens stop working at once, and its access tokens are
 * refused by introspection and token review on every replica (the grant id joins the shared
 * revocation set for as long as one of them could live).
 * @throws AdminError `invalid_input` for a malformed id; `not_found` for an unknown user, or a
 * grant that is not a live one of this user.
 * @example await revokeUserGrant(ports, 'alice', '5c1e0d7a-0f4b-4e8e-bb2f-6a9d3c2e1f00');
 */
export async function revokeUserGrant(ports: Ports, username: string, grantId: string): Promise<void> {
  const id = checkId(GrantId, grantId, 'grant');
  const { storage } = ports;
  const user = await findUser(storage, username);
  const grant = await storage.grants.findById(id);
  const now = nowOf(ports);
  const notFound = () =>
    new AdminError('not_found', 'grant', `no grant ${id} of user ${user.username}`, { key: id });
  if (grant === undefined || grant.userId !== user.id || grant.revokedAt !== null) throw notFound();
  if (grant.expiresAt.getTime() <= now.getTime()) throw notFound();
  await ports.storage.transaction(async (tx) => {
    if (!(await tx.grants.revoke(id, now))) throw notFound();
    const revoked = [{ ...grant, revokedAt: now }];
    await publishGrantRevocations(revocationContext(tx, ports), revoked);
    const change = { objectKind: 'grant', objectId: id, operation: 'revoke' } as const;
    await recordAdminRevocation(tx, ports, user.id, change, revoked);
  });
}

/**
 * Revokes every grant of a user (see {@link revokeUserGrant}): every application must ask the
 * user to sign in again.
 * @returns how many live grants were revoked.
 * @throws AdminError `not_found` for an unknown user.
 * @example const { revoked } = await revokeAllUserGrants(ports, 'alice');
 */
export async function revokeAllUserGrants(ports: Ports, username: string): Promise<RevokedGrants> {
  const { storage } = ports;
  const user = await findUser(storage, username);
  const now = nowOf(ports);
  const revoked = await ports.storage.transaction(async (tx) => {
    const grants = await tx.grants.revokeByUser(user.id, now);
    await publishGrantRevocations(revocationContext(tx, ports), grants);
    const change = { objectKind: 'grant', objectId: user.id, operation: 'revoke-all' } as const;
    await recordAdminRevocation(tx, ports, user.id, change, grants);
    return grants;
  });
  return { revoked: revoked.filter((grant) => grant.expiresAt.getTime() > now.getTime()).length };
}
