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

/** Grants. */
export interface GrantRepository {
  create(grant: GrantRecord): Promise<GrantRecord>;
  findById(id: string): Promise<GrantRecord | undefined>;
  /** Revokes a live grant; false when missing or already revoked. */
  revoke(id: string, at: Date): Promise<boolean>;
  /**
   * Revokes every live grant of a browser session (only those of `clientId`, when given);
   * returns the revoked grants.
   */
  revokeBySession(sessionId: string, at: Date, clientId?: string): Promise<GrantRecord[]>;
  /** Revokes every live grant of a user; returns the revoked grants. */
  revokeByUser(userId: string, at: Date): Promise<GrantRecord[]>;
  /** Revokes every live grant of a client; returns the revoked grants. */
  revokeByClient(clientId: string, at: Date): Promise<GrantRecord[]>;
  /**
   * Replaces a grant's upstream record only while its `checkedAt` is still `previous`
   * (compare-and-set): of concurrent refreshes, exactly one gets true and asks the upstream.
   */
  updateUpstream(id: string, upstream: GrantUpstream, previous: Date): Promise<boolean>;
  /**
   * Replaces the sealed upstream state `previous` with `next` on every grant of the identity
   * (`provider`, `subject`) that holds it — the grants of one browser sign-in share its upstream
   * token, which the upstream just rotated; returns how many were changed.
   */
  replaceUpstreamState(provider: string, subject: string, previous: string, next: string): Promise<number>;
  /**
   * Records a token request on a grant that is not revoked (`lastUsedAt`, `lastUsedAddress`) and
   * answers the grant as it is then; undefined when there is no such grant or it is revoked.
   * One statement: it is on the refresh path.
   */
  recordUse(id: string, at: Date, address: string | null): Promise<GrantRecord | undefined>;
  /**
   * One page of a user's live grants (neither revoked nor expired at `now`), oldest first by
   * (`createdAt`, `id`), starting after `page.after` when given; at most `page.limit`.
   */
  listLiveByUser(userId: string, now: Date, page: PageRequest): Promise<GrantRecord[]>;
  /** One page of a client's live grants, as {@link GrantRepository.listLiveByUser} pages a user's. */
  listLiveByClient(clientId: string, now: Date, page: PageRequest): Promise<GrantRecord[]>;
  /**
   * What the grants made in these browser sessions show of them: for each session and client,
   * the latest grant's creation.
   */
  sessionActivity(sessionIds: readonly string[]): Promise<SessionActivity[]>;
}

/** Where a keyset page starts and how long it is. */
export interface PageRequest {
  limit: number;
  /** The sort key of the last item of the page before. */
  after?: { createdAt: Date; id: string };
}

/** A client a browser session signed in to, and when it last did. */
export interface SessionActivity {
  sessionId: string;
  clientId: string;
  lastGrantAt: Date;
}

/** What happened when a code was presented. */
export type CodeRedemption =
  | { status: 'redeemed'; code: AuthorizationCodeRecord }
  | { status: 'replayed'; code: AuthorizationCodeRecord }
  | { status: 'unknown' };

/** Authorization codes. */
export interface AuthorizationCodeRepository {
  create(code: AuthorizationCodeRecord): Promise<void>;
  /**
   * Marks the code consumed, atomically: exactly one concurrent caller gets `redeemed`, every
   * other (and every later one) gets `replayed`.
   */
  redeem(hash: string, at: Date): Promise<CodeRedemption>;
  /**
   * Stores the grant a redeemed code produced and records it on the code, as one step: both land
   * or neither does, so a replay of the code can always revoke what it produced. Answers the grant
   * as stored; a grant id already taken is `StorageConflictError('id')`. On PostgreSQL one
   * statement (a data-modifying CTE): the exchange is on the token endpoint's hot path.
   */
  openGrant(hash: string, grant: GrantRecord): Promise<GrantRecord>;
  /** Removes codes that expired before `now`; returns how many. */
  purgeExpired(now: Date): Promise<number>;
}

/** What happened when a refresh token was presented. */
export type RefreshTokenUse =
  | { status: 'rotated'; token: RefreshTokenRecord }
  | { status: 'reused'; token: RefreshTokenRecord }
  | { status: 'unknown' };

/** Refresh tokens. */
export interface RefreshTokenRepository {
  create(token: RefreshTokenRecord): Promise<void>;
  findByHash(hash: string): Promise<RefreshTokenRecord | undefined>;
  /** Marks the token used, atomically: one concurrent caller gets `rotated`, the others `reused`. */
  use(hash: string, at: Date): Promise<RefreshTokenUse>;
  /** Removes tokens that expired before `now`; returns how many. */
  purgeExpired(now: Date): Promise<number>;
}

/** Browser sessions. */
export interface BrowserSessionRepository {
  create(session: BrowserSessionRecord): Promise<void>;
  findBySecretHash(secretHash: string): Promise<BrowserSessionRecord | undefined>;
  findById(id: string): Promise<BrowserSessionRecord | undefined>;
  /**
   * Replaces the sealed upstream state `previous` with `next` on every session of the identity
   * (`provider`, `subject`) that holds it, so codes issued from the session later hand on the
   * upstream token as rotated; returns how many were changed.
   */
  replaceUpstreamState(provider: string, subject: string, previous: string, next: string): Promise<number>;
  /** Ends a live session; false when missing or already ended. */
  end(id: string, at: Date): Promise<boolean>;
  /**
   * One page of a user's live sessions (neither ended nor expired at `now`), oldest first by
   * (`createdAt`, `id`), starting after `page.after` when given; at most `page.limit`.
   */
  listLiveByUser(userId: string, now: Date, page: PageRequest): Promise<BrowserSessionRecord[]>;
  /**
   * One page of the live sessions that signed in to a client (a grant of the client was made in
   * them), oldest first by (`createdAt`, `id`), as {@link BrowserSessionRepository.listLiveByUser}.
   */
  listLiveByClient(clientId: string, now: Date, page: PageRequest): Promise<BrowserSessionRecord[]>;
  /** Ends every live session of a user (not ended, not expired at `at`); returns their ids. */
  endByUser(userId: string, at: Date): Promise<string[]>;
}

/** Remembered consents, one per user and client. */
export interface ConsentRepository {
  find(userId: string, clientId: string): Promise<ConsentRecord | undefined>;
  /** Inserts or replaces the consent of this user to this client. */
  save(consent: ConsentRecord): Promise<void>;
}

/** Pending authorization interactions. */
export interface InteractionRepository {
  create(interaction: InteractionRecord): Promise<void>;
  findById(id: string): Promise<InteractionRecord | undefined>;
  /** Records the signed-in user, and how they signed in (`amr`), ending any pending second factor. */
  setUser(id: string, userId: string, authTime: Date, amr?: string[] | null): Promise<void>;
  /**
   * Records a user who gave the right password and owes a second factor, with the external
   * identity the password was checked at (LDAP), if any.
   */
  setPendingUser(id: string, userId: string, upstream?: GrantUpstream | null): Promise<void>;
  /** Deletes it (finished or abandoned); false when it was not there. */
  remove(id: string): Promise<boolean>;
  purgeExpired(now: Date): Promise<number>;
}

/** Login attempts. */
export interface LoginAttemptRepository {
  record(attempt: LoginAttemptRecord): Promise<void>;
  /**
   * Failed attempts for a lower-cased username since `since`, counting only those after the
   * latest successful one. With `provider`, only that provider's account (an LDAP `bob` and a
   * local `bob` are two accounts; its successes alone reset the count); with `familiar`, only
   * failures from addresses that were (true) or were not (false) familiar when they happened;
   * with `reason`, only failures of that reason (wrong device user codes, not those refused unread).
   */
  failuresForUsername(
    username: string,
    since: Date,
    options?: { provider?: string; familiar?: boolean; reason?: string },
  ): Promise<{ count: number; latest: Date | null }>;
  /**
   * Failed attempts from a source address since `since`, after the latest lift of its block (an
   * attempt recorded as `ADDRESS_LIFT` from the address, or from `*`: every address); with
   * `channel`, only the browser's (login and device pages: no client) or only the password
   * grant's (a client).
   */
  failuresFromAddress(
    sourceAddress: string,
    since: Date,
    options?: { channel?: 'browser' | 'grant' },
  ): Promise<{ count: number; latest: Date | null }>;
  /**
   * The addresses with at least `minimum` failures since `since` (after the latest lift of their
   * block, see `ADDRESS_LIFT`), by channel: the browser's (no client) and the password
   * grant's apart; at most `limit`, most failures first.
   */
  failingAddresses(
    since: Date,
    minimum: number,
    limit: number,
  ): Promise<Array<{ address: string; channel: 'browser' | 'grant'; count: number; latest: Date }>>;
  /** Failed password-grant attempts through a client since `since`. */
  failuresForClient(clientId: string, since: Date): Promise<{ count: number; latest: Date | null }>;
  /** Whether the account (lower-cased username, provider) ever signed in successfully from the address. */
  hasSucceededFrom(username: string, provider: string, sourceAddress: string): Promise<boolean>;
  /** The latest attempts for a lower-cased username, newest first. */
  listByUsername(username: string, limit: number): Promise<LoginAttemptRecord[]>;
}

/** What an approval or a denial of a device authorization records. */
export type DeviceDecision =
  | {
      status: 'approved';
      userId: string;
      authTime: Date;
      sessionId: string | null;
      /** The approver's external identity, for the grant to re-check upstream. */
      upstream?: GrantUpstream | null;
      /** How the approver signed in (RFC 8176). */
      amr?: string[] | null;
    }
  | { status: 'denied'; userId: string };

/** A device's poll as {@link DeviceAuthorizationRepository.poll} recorded it. */
export interface DevicePoll {
  /** The request after the poll (its `interval` already grown when `slowDown`). */
  record: DeviceAuthorizationRecord;
  /** The request is pending and the poll came too soon: RFC 8628 §3.5 `slow_down`. */
  slowDown: boolean;
}

/** Device authorization requests (RFC 8628). */
export interface DeviceAuthorizationRepository {
  /**
   * Stores a new request. A user code still held by a live (unexpired) request is a conflict
   * (`StorageConflictError('userCode')`); one held only by an expired request is taken over.
   */
  create(record: DeviceAuthorizationRecord): Promise<void>;
  findByDeviceCodeHash(hash: string): Promise<DeviceAuthorizationRecord | undefined>;
  /** The request holding a normalised user code, if it has not expired at `now`. */
  findLiveByUserCode(userCode: string, now: Date): Promise<DeviceAuthorizationRecord | undefined>;
  /**
   * Records a device's poll (RFC 8628 §3.4–3.5) in one atomic step, and answers the request as it
   * is after it. Only a request of `clientId` is found (another client's code is neither touched
   * nor shown: undefined, as for no request at all). When the request is `pending` and unexpired
   * at `at`, `at` becomes its last poll, and a poll sooner than `interval` seconds after the one
   * before is `slowDown`: the interval grows by `slowDownSeconds` for this and every later poll.
   * A request in any other state is answered unchanged. Of concurrent polls of one request, each
   * sees the ones before it (the database orders them), so two at once cannot both pass.
   */
  poll(hash: string, clientId: string, at: Date, slowDownSeconds: number): Promise<DevicePoll | undefined>;
  /**
   * Approves or denies a pending, unexpired request, atomically: true for the one caller that
   * moved it out of `pending`, false for everyone else.
   */
  decide(hash: string, decision: DeviceDecision, at: Date): Promise<boolean>;
  /**
   * Moves an approved request to `consumed`, atomically: `won` for exactly one caller; undefined
   * when there is no such request.
   */
  consume(hash: string, at: Date): Promise<{ won: boolean; record: DeviceAuthorizationRecord } | undefined>;
  /** Removes requests that expired before `now`; returns how many. */
  purgeExpired(now: Date): Promise<number>;
}
