import type { IdentityProviderRecord, LinkedIdentityRecord, LoginTransactionRecord } from '../model.js';

/** Identity providers managed at run time (those of the YAML file are not stored). */
export interface IdentityProviderRepository {
  /** @throws StorageConflictError('name') when the name exists in any case. */
  create(provider: IdentityProviderRecord): Promise<IdentityProviderRecord>;
  /** Looks up regardless of case. */
  findByName(name: string): Promise<IdentityProviderRecord | undefined>;
  /** All, ordered by name. */
  list(): Promise<IdentityProviderRecord[]>;
  /** Returns the updated record, or undefined when there is none. */
  setDisabled(name: string, disabled: boolean, at: Date): Promise<IdentityProviderRecord | undefined>;
  /**
   * Replaces the configuration (secrets sealed) and the disabled flag; the name, the type and the
   * identities linked through the provider stay. Returns the updated record, or undefined when
   * there is none.
   */
  update(
    name: string,
    changes: Pick<IdentityProviderRecord, 'config' | 'disabled' | 'updatedAt'>,
  ): Promise<IdentityProviderRecord | undefined>;
  /** Removes the provider and every identity linked through it; false when there was none. */
  remove(name: string): Promise<boolean>;
}

/** External identities linked to users. */
export interface LinkedIdentityRepository {
  /** @throws StorageConflictError('subject') when (provider, subject) is linked already. */
  link(identity: LinkedIdentityRecord): Promise<LinkedIdentityRecord>;
  find(provider: string, subject: string): Promise<LinkedIdentityRecord | undefined>;
  /** The user's identities, ordered by provider then subject. */
  listByUser(userId: string): Promise<LinkedIdentityRecord[]>;
  /** How many identities are linked through the provider (its lower-case name). */
  countByProvider(provider: string): Promise<number>;
  /**
   * Records a sign-in: the username, email and groups the provider gave this time, and whether it
   * vouched for the email (absent: it did not).
   */
  recordSignIn(
    provider: string,
    subject: string,
    fields: { username: string; email: string | null; emailVerified?: boolean; groups: string[]; at: Date },
  ): Promise<void>;
  /** False when it was not linked. */
  unlink(provider: string, subject: string): Promise<boolean>;
}

/** What happened when a callback presented a state. */
export type LoginTransactionUse =
  | { status: 'consumed'; transaction: LoginTransactionRecord }
  | { status: 'replayed'; transaction: LoginTransactionRecord }
  | { status: 'unknown' };

/** External sign-ins in progress. */
export interface LoginTransactionRepository {
  create(transaction: LoginTransactionRecord): Promise<void>;
  /** The transaction of a state, consumed or not (to check whose it is before consuming it). */
  find(stateHash: string): Promise<LoginTransactionRecord | undefined>;
  /** Marks it consumed, atomically: one caller gets `consumed`, every other `replayed`. */
  consume(stateHash: string, at: Date): Promise<LoginTransactionUse>;
  purgeExpired(now: Date): Promise<number>;
}
