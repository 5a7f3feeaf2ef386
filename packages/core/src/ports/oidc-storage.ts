import type {
  AuthorizationCodeRecord,
  BrowserSessionRecord,
  ConsentRecord,
  DeviceAuthorizationRecord,
  GrantRecord,
  InteractionRecord,
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
  /** Records the grant a redeemed code produced, so that a replay can revoke it. */
  attachGrant(hash: string, grantId: string): Promise<void>;
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
  /** Ends a live session; false when missing or already ended. */
  end(id: string, at: Date): Promise<boolean>;
  /** Ends every live session of a user; answers how many. */
  endByUser(userId: string, at: Date): Promise<number>;
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
  /** Records the signed-in user. */
  setUser(id: string, userId: string, authTime: Date): Promise<void>;
  /** Deletes it (finished or abandoned); false when it was not there. */
  remove(id: string): Promise<boolean>;
  purgeExpired(now: Date): Promise<number>;
}

/** Login attempts. */
export interface LoginAttemptRepository {
  record(attempt: LoginAttemptRecord): Promise<void>;
  /**
   * Failed attempts for a lower-cased username since `since`, counting only those after the
   * latest successful one.
   */
  failuresForUsername(username: string, since: Date): Promise<{ count: number; latest: Date | null }>;
  /** Failed attempts from a source address since `since`. */
  failuresFromAddress(sourceAddress: string, since: Date): Promise<{ count: number; latest: Date | null }>;
  /** The latest attempts for a lower-cased username, newest first. */
  listByUsername(username: string, limit: number): Promise<LoginAttemptRecord[]>;
}

/** What an approval or a denial of a device authorization records. */
export type DeviceDecision =
  | { status: 'approved'; userId: string; authTime: Date; sessionId: string | null }
  | { status: 'denied'; userId: string };

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
  /** Records a poll at `at` and the interval the device must keep from now on. */
  recordPoll(hash: string, at: Date, interval: number): Promise<void>;
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
