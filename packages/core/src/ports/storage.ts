import type { OAuthErrorCode, ProblemCode } from '@idgate/schema';
import { IdgateError } from '../errors.js';
import type {
  ApiKeyRecord,
  ClientRecord,
  ClusterRecord,
  FactorRecord,
  GroupRecord,
  NewUser,
  NotBeforeRecord,
  NotBeforeScope,
  RevocationKind,
  RevocationRecord,
  SigningKeyRecord,
  SubjectTokenUseRecord,
  TrustRecord,
  UserPatch,
  UserRecord,
  WebAuthnChallengeRecord,
} from '../model.js';
import type { AuditEventRepository } from './audit-storage.js';
import type { DeclaredObjectRepository } from './declaration-storage.js';
import type {
  IdentityProviderRepository,
  LinkedIdentityRepository,
  LoginTransactionRepository,
} from './federation-storage.js';
import type {
  AuthorizationCodeRepository,
  BrowserSessionRepository,
  ConsentRepository,
  DeviceAuthorizationRepository,
  GrantRepository,
  InteractionRepository,
  LoginAttemptRepository,
  RefreshTokenRepository,
} from './oidc-storage.js';

/**
 * Thrown by a repository when a write collides with a unique constraint (a username that exists
 * regardless of case, a client id, a key id). `field` names the colliding field. Callers usually
 * catch it and answer in their own words; one that escapes is a 409.
 * @example
 * throw new StorageConflictError('username');
 */
export class StorageConflictError extends IdgateError<'conflict'> {
  override readonly name: string = 'StorageConflictError';
  readonly kind = 'storage_conflict' as const;

  constructor(
    readonly field: string,
    description = `${field} already exists`,
  ) {
    super('conflict', description, 409);
  }

  get oauthError(): OAuthErrorCode {
    return 'invalid_request';
  }

  get problemCode(): ProblemCode {
    return 'conflict';
  }
}

/**
 * Why storage could not answer: the codes of {@link StorageUnavailableError}. `unreachable`: no
 * connection (refused, reset, the server shutting down); `busy`: the database is locked or out of
 * connections; `timeout`: an answer took too long.
 */
export type StorageUnavailability = 'unreachable' | 'busy' | 'timeout';

/** Seconds a client is asked to wait before trying again, unless the thrower knows better. */
const DEFAULT_RETRY_AFTER_SECONDS = 5;

/**
 * Storage that cannot answer right now (the database is down, locked or too slow): a 503 with
 * `Retry-After`, and a description that says nothing about the database beyond that. The driver's
 * error is the `cause`, logged with the request id, never sent.
 * @example
 * throw new StorageUnavailableError('unreachable', { cause: error });
 */
export class StorageUnavailableError extends IdgateError<StorageUnavailability> {
  override readonly name: string = 'StorageUnavailableError';
  readonly kind = 'storage_unavailable' as const;

  constructor(code: StorageUnavailability, options: { retryAfterSeconds?: number; cause?: unknown } = {}) {
    const retryAfter = String(options.retryAfterSeconds ?? DEFAULT_RETRY_AFTER_SECONDS);
    super(code, 'the service is unavailable; try again shortly', 503, {
      headers: { 'Retry-After': retryAfter },
      ...(options.cause === undefined ? {} : { cause: options.cause }),
    });
  }

  get oauthError(): OAuthErrorCode {
    return 'temporarily_unavailable';
  }

  get problemCode(): ProblemCode {
    return 'storage_unavailable';
  }
}

/** Which users a listing shows: `active` users are neither disabled nor locked. */
export type UserStatus = 'active' | 'disabled' | 'locked';

/**
 * One page of users, in the order of {@link UserRepository.list} (lower-cased username, byte
 * order): those after `after` (a lower-cased username), filtered, at most `limit`.
 */
export interface UserPageQuery {
  /** The lower-cased username of the last user of the page before. */
  after?: string;
  limit: number;
  /** Only members of this group (exact, case-sensitive, as Kubernetes compares groups). */
  group?: string;
  /** Only users in this state; `lock` says what locks an account (for `active` and `locked`). */
  status?: UserStatus;
  /** What locks an account, as the login throttle sees it at `now`. */
  lock?: { now: Date; maxFailures: number; windowSeconds: number };
  /** Only users whose username, email or display name contains this text, in any (ASCII) case. */
  text?: string;
}

/** A group (the union of users' groups) and how many users are in it. */
export interface GroupSummary {
  name: string;
  members: number;
}

/** A stored group and how many users are in it. */
export interface StoredGroup extends GroupRecord {
  members: number;
}

/** What {@link GroupRepository.update} may change (`updatedAt` always). */
export interface GroupChanges {
  name?: string;
  description?: string | null;
  requireMfa?: boolean;
  updatedAt: Date;
}

/**
 * Groups as objects of their own. Users' `groups` name them: creating or updating a user with
 * groups creates (through {@link GroupRepository.ensure}) the groups that do not exist yet, so every
 * group a user is in has a row. The members themselves stay on the users.
 */
export interface GroupRepository {
  /** @throws StorageConflictError('name') for a name taken. */
  create(group: GroupRecord): Promise<GroupRecord>;
  /** Creates, at `at` and without description, each group of `names` that does not exist; answers those created. */
  ensure(names: readonly string[], at: Date): Promise<string[]>;
  /** The group called exactly `name`, with its member count. */
  find(name: string): Promise<StoredGroup | undefined>;
  /** Groups by name (byte order), after `after`, at most `limit`, each with its member count. */
  page(query: { after?: string; limit: number }): Promise<StoredGroup[]>;
  /**
   * Changes the group `name` (renaming only the row: its members are the caller's to rename);
   * undefined when there is no such group.
   * @throws StorageConflictError('name') when the new name is taken.
   */
  update(name: string, changes: GroupChanges): Promise<GroupRecord | undefined>;
  /** Deletes the row (not the members' groups); false when there was none. */
  remove(name: string): Promise<boolean>;
}

/** Users. Usernames are unique regardless of case and looked up regardless of case. */
export interface UserRepository {
  /**
   * Creates the groups of the user that do not exist yet (see {@link GroupRepository}).
   * @throws StorageConflictError('username') when the username exists in any case; ('id') for a taken id.
   */
  create(user: NewUser): Promise<UserRecord>;
  findById(id: string): Promise<UserRecord | undefined>;
  findByUsername(username: string): Promise<UserRecord | undefined>;
  /**
   * Users whose email is `email` regardless of case (ASCII case on SQLite), ordered like `list`;
   * at most a few: enough to tell one match from several.
   */
  findByEmail(email: string): Promise<UserRecord[]>;
  /** All users ordered by lower-cased username, in byte (code unit) order. */
  list(): Promise<UserRecord[]>;
  /**
   * Returns the updated user, or undefined when there is no such user. New `groups` that do not
   * exist yet are created (see {@link GroupRepository}).
   */
  update(id: string, patch: UserPatch): Promise<UserRecord | undefined>;
  /** One page of users (see {@link UserPageQuery}). */
  page(query: UserPageQuery): Promise<UserRecord[]>;
  /**
   * The groups users are in, by name (byte order), after `after`, at most `limit`; `name` asks
   * for that one group only.
   */
  groups(query: { after?: string; limit: number; name?: string }): Promise<GroupSummary[]>;
  /** Deletes a user; false when there was none. */
  remove(id: string): Promise<boolean>;
  count(): Promise<number>;
}

/** OAuth clients. */
export interface ClientRepository {
  /** @throws StorageConflictError('clientId') */
  create(client: ClientRecord): Promise<ClientRecord>;
  findById(clientId: string): Promise<ClientRecord | undefined>;
  /** All clients ordered by creation time. */
  list(): Promise<ClientRecord[]>;
  /**
   * Up to `limit` clients in the order of {@link ClientRepository.list} (creation time, then id),
   * those after `after` when given: one page of a keyset listing.
   */
  listPage(limit: number, after?: { createdAt: Date; clientId: string }): Promise<ClientRecord[]>;
  /**
   * Replaces every field of the client `client.clientId` but its id and creation time (settings,
   * secret hash, previous secret); returns false when there is no such client.
   */
  update(client: ClientRecord): Promise<boolean>;
  /** Replaces a client's audiences; returns false when there is no such client. */
  setAudiences(clientId: string, audiences: string[]): Promise<boolean>;
  /** Returns false when there was no such client. */
  remove(clientId: string): Promise<boolean>;
  count(): Promise<number>;
}

/** API keys. */
export interface ApiKeyRepository {
  /** @throws StorageConflictError('prefix') or ('id') */
  create(key: ApiKeyRecord): Promise<ApiKeyRecord>;
  findByPrefix(prefix: string): Promise<ApiKeyRecord | undefined>;
  findById(id: string): Promise<ApiKeyRecord | undefined>;
  /**
   * Sets the name or the expiry (null: never) of the key `id` while it is not revoked; answers the
   * key as it is then (as it was for no change), or undefined when there is no such unrevoked key.
   */
  update(id: string, changes: { name?: string; expiresAt?: Date | null }): Promise<ApiKeyRecord | undefined>;
  /** All keys ordered by creation time, then id, revoked ones included. */
  list(): Promise<ApiKeyRecord[]>;
  /** Up to `limit` keys in the order of {@link ApiKeyRepository.list} (creation time, then id), after `after`. */
  listPage(limit: number, after?: { createdAt: Date; id: string }): Promise<ApiKeyRecord[]>;
  /** Revokes by id, else by prefix; returns false when that key is missing or already revoked. */
  revoke(idOrPrefix: string, at: Date): Promise<boolean>;
  /** Revokes every live key bound to the cluster `name`; returns how many. */
  revokeByCluster(name: string, at: Date): Promise<number>;
  /**
   * Binds every key bound to the cluster `name` (revoked ones too) to `cluster` instead — the
   * cluster renamed or given another audience; returns how many.
   */
  rebindCluster(name: string, cluster: { name: string; audience: string }): Promise<number>;
  touch(id: string, at: Date): Promise<void>;
  count(): Promise<number>;
}

/** Kubernetes clusters. Names are stored lower-cased; names and audiences are unique. */
export interface ClusterRepository {
  /** @throws StorageConflictError('name') or ('audience') */
  create(cluster: ClusterRecord): Promise<ClusterRecord>;
  findByName(name: string): Promise<ClusterRecord | undefined>;
  /** All clusters ordered by name. */
  list(): Promise<ClusterRecord[]>;
  /**
   * Renames the cluster `name`, gives it another audience and/or sets whether it requires a
   * second factor; undefined when there is no such
   * cluster. Its API keys are the caller's to rebind ({@link ApiKeyRepository.rebindCluster}).
   * @throws StorageConflictError('name') or ('audience') when taken by another cluster.
   */
  update(
    name: string,
    changes: { name?: string; audience?: string; requireMfa?: boolean },
  ): Promise<ClusterRecord | undefined>;
  /** Returns false when there was no such cluster. */
  remove(name: string): Promise<boolean>;
}

/** Trusts of external issuers (token exchange). Names are stored lower-cased and unique. */
export interface TrustRepository {
  /** @throws StorageConflictError('name') */
  create(trust: TrustRecord): Promise<TrustRecord>;
  findByName(name: string): Promise<TrustRecord | undefined>;
  /** All trusts ordered by name. */
  list(): Promise<TrustRecord[]>;
  /** Replaces the trust `trust.name`; undefined when there is none. */
  update(trust: TrustRecord): Promise<TrustRecord | undefined>;
  /** Returns false when there was no such trust. */
  remove(name: string): Promise<boolean>;
}

/** The subject tokens' `jti`s the token exchange spent: each is accepted once. */
export interface SubjectTokenUseRepository {
  /** Records the use; false when (issuer, jti) was used already and has not expired. */
  spend(use: SubjectTokenUseRecord, now: Date): Promise<boolean>;
  /** Removes uses whose expiresAt is at or before `now`; returns how many. */
  purgeExpired(now: Date): Promise<number>;
}

/** Signing keys. */
export interface SigningKeyRepository {
  insert(key: SigningKeyRecord): Promise<void>;
  /** All keys, newest first (by creation time, then kid, descending). */
  list(): Promise<SigningKeyRecord[]>;
  /** Marks a key retired; returns false when it was not found or already retired. */
  retire(kid: string, retiredAt: Date, publishedUntil: Date): Promise<boolean>;
  /**
   * Takes a key out at `at`, whatever its state: it stops signing (retired at `at` unless it
   * retired earlier) and leaves JWKS (published until `at`). False when there is no such key or it
   * had left JWKS already.
   */
  withdraw(kid: string, at: Date): Promise<boolean>;
}

/** The not-befores in force (see {@link NotBeforeRecord}). */
export interface NotBeforeRepository {
  /**
   * Sets the not-before of (`scope`, `subject`), keeping the later instant when one is set
   * already; answers the record in force after.
   */
  raise(entry: NotBeforeRecord): Promise<NotBeforeRecord>;
  find(scope: NotBeforeScope, subject: string): Promise<NotBeforeRecord | undefined>;
  /** Every not-before, by scope then subject. */
  list(): Promise<NotBeforeRecord[]>;
  /**
   * The latest not-before that covers a token of `clientId` (null: none, a browser session) for
   * `userId` (null: a client acting for itself): the global one, the client's and the user's.
   */
  latestFor(clientId: string | null, userId: string | null): Promise<Date | undefined>;
}

/** The shared revocation set. */
export interface RevocationRepository {
  /** Adding an entry that exists already keeps the later `expiresAt`. */
  add(entry: RevocationRecord): Promise<void>;
  isRevoked(kind: RevocationKind, value: string, now: Date): Promise<boolean>;
  /** Live entries (expiresAt after `now`) by kind, then value, for loading a replica's in-memory set. */
  listLive(now: Date): Promise<RevocationRecord[]>;
  /** Removes entries whose expiresAt is at or before `now` (no longer live); returns how many. */
  purgeExpired(now: Date): Promise<number>;
}

/** Every repository, over one database. */
/** A user's second factors, recovery codes, and whether an administrator requires a second factor. */
export interface FactorRepository {
  /** The user's factors, confirmed or not, oldest first. */
  list(userId: string): Promise<FactorRecord[]>;
  findById(userId: string, id: string): Promise<FactorRecord | undefined>;
  /** @throws StorageConflictError (`name`) when the user has a factor of that name. */
  create(factor: FactorRecord): Promise<FactorRecord>;
  /** Confirms an enrolment with the step of the code that confirmed it; false when already confirmed or gone. */
  confirm(userId: string, id: string, step: number, at: Date): Promise<boolean>;
  /** Records `step` as used only when it is after the last one (compare-and-set): false on a replay. */
  useStep(userId: string, id: string, step: number, at: Date): Promise<boolean>;
  /** The confirmed or unconfirmed WebAuthn factor of that credential id, whoever's it is. */
  findByCredentialId(credentialId: string): Promise<FactorRecord | undefined>;
  /**
   * Records a WebAuthn assertion: the signature counter becomes `next` only while it is still
   * `previous` (compare-and-set, so of two assertions one wins); false otherwise or when gone.
   */
  useSignCount(userId: string, id: string, previous: number, next: number, at: Date): Promise<boolean>;
  remove(userId: string, id: string): Promise<boolean>;
  /** Removes every factor and recovery code of the user; how many factors. */
  removeAll(userId: string): Promise<number>;
  /** Replaces the user's recovery codes (by hash) with a new set. */
  replaceRecoveryCodes(userId: string, hashes: readonly string[], at: Date): Promise<void>;
  /** Marks the unused code of that hash used (compare-and-set): false when unknown or used. */
  useRecoveryCode(userId: string, hash: string, at: Date): Promise<boolean>;
  /** How many unused recovery codes the user has. */
  recoveryCodesLeft(userId: string): Promise<number>;
  setRequired(userId: string, required: boolean, at: Date): Promise<void>;
  isRequired(userId: string): Promise<boolean>;
  /** Stores a WebAuthn challenge, dropping the expired ones. */
  saveChallenge(challenge: WebAuthnChallengeRecord, now: Date): Promise<void>;
  /** Takes (deletes and returns) a challenge by id: once only, expired or not. */
  takeChallenge(id: string): Promise<WebAuthnChallengeRecord | undefined>;
}

export interface Storage {
  readonly users: UserRepository;
  readonly groups: GroupRepository;
  readonly clients: ClientRepository;
  readonly apiKeys: ApiKeyRepository;
  readonly signingKeys: SigningKeyRepository;
  readonly revocations: RevocationRepository;
  readonly notBefore: NotBeforeRepository;
  readonly grants: GrantRepository;
  readonly authorizationCodes: AuthorizationCodeRepository;
  readonly refreshTokens: RefreshTokenRepository;
  readonly sessions: BrowserSessionRepository;
  readonly consents: ConsentRepository;
  readonly interactions: InteractionRepository;
  readonly deviceAuthorizations: DeviceAuthorizationRepository;
  readonly loginAttempts: LoginAttemptRepository;
  readonly identityProviders: IdentityProviderRepository;
  readonly identities: LinkedIdentityRepository;
  readonly loginTransactions: LoginTransactionRepository;
  readonly clusters: ClusterRepository;
  readonly trusts: TrustRepository;
  readonly subjectTokenUses: SubjectTokenUseRepository;
  readonly factors: FactorRepository;
  /** The audit trail: append events through the transaction that makes the change they record. */
  readonly auditEvents: AuditEventRepository;
  /** Which objects declaration managers (`idgate apply`) own. */
  readonly declaredObjects: DeclaredObjectRepository;
  /**
   * Runs `work` in one transaction: all its writes land, or none do. `work` must use only the
   * storage it is given: the outer one is outside the transaction (and on SQLite would wait for it).
   */
  transaction<T>(work: (storage: Storage) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}
