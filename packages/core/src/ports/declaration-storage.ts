import type { DeclaredKind } from '@idgate/schema';

/**
 * An object a declaration manager (`idgate apply --manager`, the file read at start) owns: what it
 * last made the object be, as a hash, so that a change by hand since shows as drift, and so that
 * `--prune` deletes only what the manager declared.
 */
export interface DeclaredObjectRecord {
  kind: DeclaredKind;
  /** The object's declared name: a client id, a lower-cased cluster name or username, a key's name. */
  name: string;
  /** The stored object's id where it differs from the name (an API key's id), else the name. */
  objectId: string;
  manager: string;
  /**
   * A hash of the secrets as last applied, for objects whose secrets storage keeps sealed (an
   * identity provider's): a changed declared secret shows without opening the stored one.
   */
  secrets: string | null;
  /** SHA-256 (base64url) of the canonical JSON of the object as last applied. */
  appliedHash: string;
  appliedAt: Date;
}

/** Which objects declaration managers own. */
export interface DeclaredObjectRepository {
  /** Every record, by kind then name. */
  list(): Promise<DeclaredObjectRecord[]>;
  /** Records that `manager` owns (kind, name), replacing what was there. */
  put(record: DeclaredObjectRecord): Promise<void>;
  /** Forgets (kind, name); false when it was not recorded. */
  remove(kind: DeclaredKind, name: string): Promise<boolean>;
}
