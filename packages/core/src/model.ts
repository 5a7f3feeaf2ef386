import type { ApiKeyScope, GrantType, SigningAlgorithm } from '@idgate/schema';

/** A local user as storage holds it. `groups` are the user's own (not from external IdPs). */
export interface UserRecord {
  id: string;
  username: string;
  email: string | null;
  displayName: string | null;
  groups: string[];
  /** An encoded password hash (argon2id PHC string), or null for users without a password. */
  passwordHash: string | null;
  disabled: boolean;
  createdAt: Date;
  updatedAt: Date;
}

/** The fields a caller supplies to create a user. */
export type NewUser = Pick<
  UserRecord,
  'id' | 'username' | 'email' | 'displayName' | 'groups' | 'passwordHash'
> & {
  disabled?: boolean;
  createdAt: Date;
};

/** The fields of a user that can change. */
export type UserPatch = Partial<
  Pick<UserRecord, 'email' | 'displayName' | 'groups' | 'passwordHash' | 'disabled'>
> & {
  updatedAt: Date;
};

/** A registered OAuth client. */
export interface ClientRecord {
  clientId: string;
  name: string;
  /** SHA-256 of the client secret (base64url), null for public clients. */
  secretHash: string | null;
  public: boolean;
  /** Trusted clients may use the password grant and skip consent. */
  trusted: boolean;
  redirectUris: string[];
  grantTypes: GrantType[];
  scopes: string[];
  /** Resource audiences put into this client's access tokens; empty means `aud` = the client id. */
  audiences: string[];
  /** Access token lifetime in seconds. */
  accessTokenTtl: number;
  /** Refresh token lifetime in seconds. */
  refreshTokenTtl: number;
  createdAt: Date;
}

/** An API key: only its public prefix and a hash of the whole key are stored. */
export interface ApiKeyRecord {
  id: string;
  name: string;
  /** The key's public, non-secret prefix (`idg_` + 8 characters); used to find the record. */
  prefix: string;
  /** SHA-256 of the whole key (base64url). */
  hash: string;
  scopes: ApiKeyScope[];
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

/** A signing key pair; the private JWK is sealed (encrypted) with the configured secret. */
export interface SigningKeyRecord {
  kid: string;
  alg: SigningAlgorithm;
  publicJwk: Record<string, unknown>;
  /** AES-256-GCM sealed private JWK (see `sealPrivateKey`). */
  sealedPrivateJwk: string;
  createdAt: Date;
  /** When the key stopped signing; null while it is the active key. */
  retiredAt: Date | null;
  /** A retired key stays in JWKS until this instant (its last token's expiry). */
  publishedUntil: Date | null;
}

/** What a revocation entry revokes: one token (`jti`), a whole grant (`sid`). */
export type RevocationKind = 'jti' | 'sid';

/** An entry of the revocation set that every replica consults. */
export interface RevocationRecord {
  kind: RevocationKind;
  value: string;
  /** After this instant the entry is useless (everything it revoked has expired) and may be purged. */
  expiresAt: Date;
  createdAt: Date;
}
