/**
 * Row shapes of the SQL tables, as both dialects store them. Columns are portable types only:
 * booleans are integers 0/1, instants are bigint epoch milliseconds, lists and JWKs are JSON text.
 * The repositories convert to and from the domain records of `@idgate/core`.
 */

export interface UsersTable {
  id: string;
  username: string;
  email: string | null;
  display_name: string | null;
  /** JSON array of strings. */
  groups: string;
  password_hash: string | null;
  /** 0 or 1. */
  disabled: number;
  created_at: number;
  updated_at: number;
}

export interface OAuthClientsTable {
  client_id: string;
  name: string;
  secret_hash: string | null;
  /** 0 or 1. */
  is_public: number;
  /** 0 or 1. */
  trusted: number;
  /** JSON arrays of strings. */
  redirect_uris: string;
  grant_types: string;
  scopes: string;
  audiences: string;
  access_token_ttl: number;
  refresh_token_ttl: number;
  created_at: number;
}

export interface ApiKeysTable {
  id: string;
  name: string;
  prefix: string;
  hash: string;
  /** JSON array of scopes. */
  scopes: string;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
}

export interface SigningKeysTable {
  kid: string;
  alg: string;
  /** JSON object. */
  public_jwk: string;
  sealed_private_jwk: string;
  created_at: number;
  retired_at: number | null;
  published_until: number | null;
}

export interface RevocationsTable {
  kind: string;
  value: string;
  expires_at: number;
  created_at: number;
}

export interface Schema {
  users: UsersTable;
  oauth_clients: OAuthClientsTable;
  api_keys: ApiKeysTable;
  signing_keys: SigningKeysTable;
  revocations: RevocationsTable;
}

/** Every table, children first, for code that must visit all of them. */
export const TABLES = ['revocations', 'signing_keys', 'api_keys', 'oauth_clients', 'users'] as const;
