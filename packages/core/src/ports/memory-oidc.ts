import type { InteractionRecord } from '../authorize/interaction.js';
import type {
  AuthorizationCodeRecord,
  BrowserSessionRecord,
  ConsentRecord,
  DeviceAuthorizationRecord,
  GrantRecord,
  GrantUpstream,
  LoginAttemptRecord,
  RefreshTokenRecord,
} from '../model.js';
import { ADDRESS_LIFT } from '../security/login-throttle.js';
import type { PageRequest, SessionActivity } from './oidc-storage.js';
import { type Storage, StorageConflictError } from './storage.js';

/** The tables of the OIDC flows, part of the in-memory storage's state (and of its snapshots). */
export interface OidcTables {
  grants: Map<string, GrantRecord>;
  authorizationCodes: Map<string, AuthorizationCodeRecord>;
  refreshTokens: Map<string, RefreshTokenRecord>;
  sessions: Map<string, BrowserSessionRecord>;
  /** Keyed by `consentKey(userId, clientId)`. */
  consents: Map<string, ConsentRecord>;
  interactions: Map<string, InteractionRecord>;
  loginAttempts: Map<string, LoginAttemptRecord>;
  /** Keyed by the device code hash. */
  deviceAuthorizations: Map<string, DeviceAuthorizationRecord>;
}

export type OidcRepositories = Pick<
  Storage,
  | 'grants'
  | 'authorizationCodes'
  | 'refreshTokens'
  | 'sessions'
  | 'consents'
  | 'interactions'
  | 'loginAttempts'
  | 'deviceAuthorizations'
>;

export function emptyOidcTables(): OidcTables {
  return {
    grants: new Map(),
    authorizationCodes: new Map(),
    refreshTokens: new Map(),
    sessions: new Map(),
    consents: new Map(),
    interactions: new Map(),
    loginAttempts: new Map(),
    deviceAuthorizations: new Map(),
  };
}

const copy = <T>(value: T): T => structuredClone(value);
// JSON of the pair, so no user id / client id combination can collide with another.
const consentKey = (userId: string, clientId: string) => JSON.stringify([userId, clientId]);
const byCreation = (a: { createdAt: Date; id: string }, b: { createdAt: Date; id: string }) =>
  a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** The live records of `records` after `page.after`, oldest first by (createdAt, id), at most `page.limit`. */
function keysetPage<T extends { id: string; createdAt: Date }>(records: Iterable<T>, page: PageRequest): T[] {
  const { after } = page;
  const later = (record: T) =>
    after === undefined ||
    record.createdAt.getTime() > after.createdAt.getTime() ||
    (record.createdAt.getTime() === after.createdAt.getTime() && record.id > after.id);
  const sorted = [...records].filter(later).sort(byCreation);
  return copy(sorted.slice(0, Math.max(0, page.limit)));
}

function insertNew<T>(table: Map<string, T>, key: string, record: T, field: string): void {
  if (table.has(key)) throw new StorageConflictError(field);
  table.set(key, copy(record));
}

/** Replaces one sealed upstream state of an identity wherever it is held; how many were changed. */
function replaceState(
  records: Iterable<{ upstream?: GrantUpstream | null }>,
  provider: string,
  subject: string,
  previous: string,
  next: string,
): number {
  let changed = 0;
  for (const record of records) {
    const upstream = record.upstream;
    if (upstream?.provider !== provider || upstream.subject !== subject) continue;
    if (upstream.sealedState !== previous) continue;
    upstream.sealedState = next;
    changed++;
  }
  return changed;
}

function purge<T extends { expiresAt: Date }>(table: Map<string, T>, now: Date): number {
  let purged = 0;
  for (const [key, record] of table) {
    if (record.expiresAt.getTime() < now.getTime()) {
      table.delete(key);
      purged++;
    }
  }
  return purged;
}

/** When the block of `address` was last lifted (see `ADDRESS_LIFT`), -∞ when never. */
function liftedAt(attempts: readonly LoginAttemptRecord[], address: string): number {
  let at = Number.NEGATIVE_INFINITY;
  for (const a of attempts) {
    if (a.username !== ADDRESS_LIFT.username || !a.success) continue;
    if (a.sourceAddress !== address && a.sourceAddress !== ADDRESS_LIFT.everyAddress) continue;
    at = Math.max(at, a.createdAt.getTime());
  }
  return at;
}

function failures(attempts: LoginAttemptRecord[], since: Date): { count: number; latest: Date | null } {
  const counted = attempts.filter((a) => !a.success && a.createdAt.getTime() >= since.getTime());
  const latest = counted.reduce<number | null>((max, a) => {
    const time = a.createdAt.getTime();
    return max === null || time > max ? time : max;
  }, null);
  return { count: counted.length, latest: latest === null ? null : new Date(latest) };
}

/**
 * The OIDC-flow repositories over `tables()`, read on every call because a rolled-back transaction
 * replaces the tables with a snapshot. No method awaits between reading and writing, which is what
 * makes `redeem` and `use` atomic here.
 */
export function createMemoryOidcRepositories(tables: () => OidcTables): OidcRepositories {
  const revokeWhere = (match: (grant: GrantRecord) => boolean, at: Date): GrantRecord[] => {
    const revoked: GrantRecord[] = [];
    for (const grant of tables().grants.values()) {
      if (grant.revokedAt !== null || !match(grant)) continue;
      grant.revokedAt = new Date(at);
      revoked.push(copy(grant));
    }
    return revoked.sort(byCreation);
  };
  const attemptsFor = (username: string) => {
    const folded = username.toLowerCase();
    return [...tables().loginAttempts.values()].filter((a) => a.username.toLowerCase() === folded);
  };

  return {
    grants: {
      async create(grant) {
        insertNew(tables().grants, grant.id, grant, 'id');
        return copy(grant);
      },
      async findById(id) {
        return copy(tables().grants.get(id));
      },
      async revoke(id, at) {
        return revokeWhere((grant) => grant.id === id, at).length > 0;
      },
      async updateUpstream(id, upstream, previous) {
        const grant = tables().grants.get(id);
        const current = grant?.upstream ?? null;
        if (grant === undefined || current === null || current.checkedAt.getTime() !== previous.getTime())
          return false;
        grant.upstream = copy(upstream);
        return true;
      },
      async replaceUpstreamState(provider, subject, previous, next) {
        return replaceState(tables().grants.values(), provider, subject, previous, next);
      },
      async revokeBySession(sessionId, at, clientId) {
        return revokeWhere(
          (grant) => grant.sessionId === sessionId && (clientId === undefined || grant.clientId === clientId),
          at,
        );
      },
      async revokeByUser(userId, at) {
        return revokeWhere((grant) => grant.userId === userId, at);
      },
      async recordUse(id, at, address) {
        const grant = tables().grants.get(id);
        if (grant === undefined || grant.revokedAt !== null) return undefined;
        grant.lastUsedAt = new Date(at);
        grant.lastUsedAddress = address;
        return copy(grant);
      },
      async listLiveByUser(userId, now, page) {
        const live = [...tables().grants.values()].filter(
          (grant) =>
            grant.userId === userId && grant.revokedAt === null && grant.expiresAt.getTime() > now.getTime(),
        );
        return keysetPage(live, page);
      },
      async listLiveByClient(clientId, now, page) {
        const live = [...tables().grants.values()].filter(
          (grant) =>
            grant.clientId === clientId &&
            grant.revokedAt === null &&
            grant.expiresAt.getTime() > now.getTime(),
        );
        return keysetPage(live, page);
      },
      async sessionActivity(sessionIds) {
        const latest = new Map<string, SessionActivity>();
        for (const grant of tables().grants.values()) {
          if (grant.sessionId === null || !sessionIds.includes(grant.sessionId)) continue;
          const key = JSON.stringify([grant.sessionId, grant.clientId]);
          const seen = latest.get(key);
          if (seen === undefined || seen.lastGrantAt.getTime() < grant.createdAt.getTime())
            latest.set(key, {
              sessionId: grant.sessionId,
              clientId: grant.clientId,
              lastGrantAt: new Date(grant.createdAt),
            });
        }
        return [...latest.values()];
      },
      async revokeByClient(clientId, at) {
        return revokeWhere((grant) => grant.clientId === clientId, at);
      },
    },
    authorizationCodes: {
      async create(code) {
        insertNew(tables().authorizationCodes, code.hash, code, 'hash');
      },
      async redeem(hash, at) {
        const code = tables().authorizationCodes.get(hash);
        if (code === undefined) return { status: 'unknown' };
        if (code.consumedAt !== null) return { status: 'replayed', code: copy(code) };
        code.consumedAt = new Date(at);
        return { status: 'redeemed', code: copy(code) };
      },
      async openGrant(hash, grant) {
        insertNew(tables().grants, grant.id, grant, 'id');
        const code = tables().authorizationCodes.get(hash);
        if (code !== undefined) code.grantId = grant.id;
        return copy(grant);
      },
      async purgeExpired(now) {
        return purge(tables().authorizationCodes, now);
      },
    },
    refreshTokens: {
      async create(token) {
        insertNew(tables().refreshTokens, token.hash, token, 'hash');
      },
      async findByHash(hash) {
        return copy(tables().refreshTokens.get(hash));
      },
      async use(hash, at) {
        const token = tables().refreshTokens.get(hash);
        if (token === undefined) return { status: 'unknown' };
        if (token.usedAt !== null) return { status: 'reused', token: copy(token) };
        token.usedAt = new Date(at);
        return { status: 'rotated', token: copy(token) };
      },
      async purgeExpired(now) {
        return purge(tables().refreshTokens, now);
      },
    },
    sessions: {
      async create(session) {
        const { sessions } = tables();
        if ([...sessions.values()].some((s) => s.secretHash === session.secretHash))
          throw new StorageConflictError('secretHash');
        insertNew(sessions, session.id, session, 'id');
      },
      async findBySecretHash(secretHash) {
        return copy([...tables().sessions.values()].find((s) => s.secretHash === secretHash));
      },
      async findById(id) {
        return copy(tables().sessions.get(id));
      },
      async replaceUpstreamState(provider, subject, previous, next) {
        return replaceState(tables().sessions.values(), provider, subject, previous, next);
      },
      async end(id, at) {
        const session = tables().sessions.get(id);
        if (session === undefined || session.endedAt !== null) return false;
        session.endedAt = new Date(at);
        return true;
      },
      async listLiveByUser(userId, now, page) {
        const live = [...tables().sessions.values()].filter(
          (session) =>
            session.userId === userId &&
            session.endedAt === null &&
            session.expiresAt.getTime() > now.getTime(),
        );
        return keysetPage(live, page);
      },
      async listLiveByClient(clientId, now, page) {
        const signedIn = new Set<string>();
        for (const grant of tables().grants.values())
          if (grant.clientId === clientId && grant.sessionId !== null) signedIn.add(grant.sessionId);
        const live = [...tables().sessions.values()].filter(
          (session) =>
            signedIn.has(session.id) &&
            session.endedAt === null &&
            session.expiresAt.getTime() > now.getTime(),
        );
        return keysetPage(live, page);
      },
      async endByUser(userId, at) {
        const ended: string[] = [];
        for (const session of tables().sessions.values()) {
          if (session.userId !== userId || session.endedAt !== null) continue;
          if (session.expiresAt.getTime() <= at.getTime()) continue;
          session.endedAt = new Date(at);
          ended.push(session.id);
        }
        return ended;
      },
    },
    consents: {
      async find(userId, clientId) {
        return copy(tables().consents.get(consentKey(userId, clientId)));
      },
      async save(consent) {
        tables().consents.set(consentKey(consent.userId, consent.clientId), copy(consent));
      },
    },
    interactions: {
      async create(interaction) {
        insertNew(tables().interactions, interaction.id, interaction, 'id');
      },
      async findById(id) {
        return copy(tables().interactions.get(id));
      },
      async setUser(id, userId, authTime, amr) {
        const interaction = tables().interactions.get(id);
        if (interaction === undefined) return;
        interaction.userId = userId;
        interaction.authTime = new Date(authTime);
        interaction.amr = amr === undefined || amr === null ? null : [...amr];
        interaction.pendingUserId = null;
        interaction.pendingUpstream = null;
      },
      async setPendingUser(id, userId, upstream) {
        const interaction = tables().interactions.get(id);
        if (interaction === undefined) return;
        interaction.pendingUserId = userId;
        interaction.pendingUpstream = copy(upstream ?? null);
      },
      async remove(id) {
        return tables().interactions.delete(id);
      },
      async purgeExpired(now) {
        return purge(tables().interactions, now);
      },
    },
    deviceAuthorizations: {
      async create(record) {
        const table = tables().deviceAuthorizations;
        for (const [key, other] of table) {
          if (other.userCode !== record.userCode) continue;
          if (other.expiresAt.getTime() > record.createdAt.getTime())
            throw new StorageConflictError('userCode');
          table.delete(key);
        }
        insertNew(table, record.deviceCodeHash, record, 'deviceCodeHash');
      },
      async findByDeviceCodeHash(hash) {
        return copy(tables().deviceAuthorizations.get(hash));
      },
      async findLiveByUserCode(userCode, now) {
        return copy(
          [...tables().deviceAuthorizations.values()].find(
            (r) => r.userCode === userCode && r.expiresAt.getTime() > now.getTime(),
          ),
        );
      },
      async poll(hash, clientId, at, slowDownSeconds) {
        const record = tables().deviceAuthorizations.get(hash);
        if (record === undefined || record.clientId !== clientId) return undefined;
        const now = at.getTime();
        let slowDown = false;
        if (record.status === 'pending' && record.expiresAt.getTime() > now) {
          const last = record.lastPolledAt;
          slowDown = last !== null && now - last.getTime() < record.interval * 1000;
          if (slowDown) record.interval += slowDownSeconds;
          record.lastPolledAt = new Date(at);
        }
        return { record: copy(record), slowDown };
      },
      async decide(hash, decision, at) {
        const record = tables().deviceAuthorizations.get(hash);
        if (record === undefined || record.status !== 'pending') return false;
        if (record.expiresAt.getTime() <= at.getTime()) return false;
        record.status = decision.status;
        record.userId = decision.userId;
        if (decision.status === 'approved') {
          record.authTime = new Date(decision.authTime);
          record.sessionId = decision.sessionId;
          record.upstream = copy(decision.upstream ?? null);
          record.amr = copy(decision.amr ?? null);
        }
        return true;
      },
      async consume(hash, at) {
        const record = tables().deviceAuthorizations.get(hash);
        if (record === undefined) return undefined;
        const won = record.status === 'approved';
        if (won) {
          record.status = 'consumed';
          record.consumedAt = new Date(at);
        }
        return { won, record: copy(record) };
      },
      async purgeExpired(now) {
        return purge(tables().deviceAuthorizations, now);
      },
    },
    loginAttempts: {
      async record(attempt) {
        // Lower-cased here too (as the SQL adapter does), whatever the caller passed.
        const stored = { ...attempt, username: attempt.username.toLowerCase() };
        insertNew(tables().loginAttempts, attempt.id, stored, 'id');
      },
      async failuresForUsername(username, since, options = {}) {
        const attempts = attemptsFor(username).filter(
          (a) => options.provider === undefined || a.provider === options.provider,
        );
        const lastSuccess = attempts.reduce(
          (max, a) => (a.success && a.createdAt.getTime() > max ? a.createdAt.getTime() : max),
          Number.NEGATIVE_INFINITY,
        );
        return failures(
          attempts.filter(
            (a) =>
              a.createdAt.getTime() > lastSuccess &&
              (options.familiar === undefined || (a.familiar ?? false) === options.familiar) &&
              (options.reason === undefined || a.reason === options.reason),
          ),
          since,
        );
      },
      async failuresFromAddress(sourceAddress, since, options = {}) {
        const attempts = [...tables().loginAttempts.values()];
        const inChannel = (a: LoginAttemptRecord) =>
          options.channel === undefined || (options.channel === 'grant') === Boolean(a.clientId);
        const lifted = liftedAt(attempts, sourceAddress);
        return failures(
          attempts.filter(
            (a) => a.sourceAddress === sourceAddress && inChannel(a) && a.createdAt.getTime() > lifted,
          ),
          since,
        );
      },
      async failingAddresses(since, minimum, limit) {
        const attempts = [...tables().loginAttempts.values()];
        const groups = new Map<
          string,
          { address: string; channel: 'browser' | 'grant'; count: number; latest: Date }
        >();
        for (const a of attempts) {
          if (a.success || a.createdAt.getTime() < since.getTime()) continue;
          if (a.createdAt.getTime() <= liftedAt(attempts, a.sourceAddress)) continue;
          const channel = a.clientId ? 'grant' : 'browser';
          const key = JSON.stringify([a.sourceAddress, channel]);
          const group = groups.get(key) ?? {
            address: a.sourceAddress,
            channel,
            count: 0,
            latest: a.createdAt,
          };
          group.count++;
          if (a.createdAt.getTime() > group.latest.getTime()) group.latest = a.createdAt;
          groups.set(key, group);
        }
        return copy(
          [...groups.values()]
            .filter((g) => g.count >= minimum)
            .sort((a, b) => b.count - a.count || (a.address < b.address ? -1 : 1))
            .slice(0, limit),
        );
      },
      async failuresForClient(clientId, since) {
        const attempts = [...tables().loginAttempts.values()];
        return failures(
          attempts.filter((a) => a.clientId === clientId),
          since,
        );
      },
      async hasSucceededFrom(username, provider, sourceAddress) {
        return attemptsFor(username).some(
          (a) => a.success && a.provider === provider && a.sourceAddress === sourceAddress,
        );
      },
      async listByUsername(username, limit) {
        const newestFirst = attemptsFor(username).sort(
          (a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0),
        );
        return copy(newestFirst.slice(0, Math.max(0, limit)));
      },
    },
  };
}
