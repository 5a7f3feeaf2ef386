import type { KeyRing } from '../keys/key-ring.js';
import type { ClientRecord } from '../model.js';
import type {
  AuthorizationCodeRepository,
  GrantRepository,
  RefreshTokenRepository,
} from '../ports/oidc-storage.js';
import type { Clock } from '../ports/runtime.js';
import type { RevocationRepository, UserRepository } from '../ports/storage.js';
import type { LoginThrottle } from '../security/login-throttle.js';
import type { PasswordLoginContext } from '../users/authenticate.js';

/** Lifetimes the grants work with, in seconds. */
export interface GrantLifetimes {
  /** ID tokens. */
  idToken: number;
  /** A grant's absolute lifetime: no refresh token outlives it. */
  grant: number;
  /** The longest access token lifetime: how long a revocation entry must live. */
  maxAccessToken: number;
}

/** The repositories the grants read and write. */
export interface GrantStorage {
  users: UserRepository;
  grants: GrantRepository;
  authorizationCodes: AuthorizationCodeRepository;
  refreshTokens: RefreshTokenRepository;
  revocations: RevocationRepository;
}

/** What the token endpoint's grant handlers need. */
export interface TokenEndpointContext {
  issuer: string;
  keys: KeyRing;
  clock: Clock;
  findClient(clientId: string): Promise<ClientRecord | undefined>;
  passwords: PasswordLoginContext;
  storage: GrantStorage;
  lifetimes: GrantLifetimes;
  /** Issue refresh tokens to trusted clients without `offline_access` (default false). */
  refreshForTrustedClients?: boolean;
  /** Brute-force protection for the password grant. */
  throttle?: LoginThrottle;
  /** The caller's address, for login records. */
  sourceAddress?: string;
  /** A new grant id; defaults to a random UUID. */
  newGrantId?: () => string;
}
