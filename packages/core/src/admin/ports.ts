import type { ApiKeyScope, IdentityProviderConfig } from '@idgate/schema';
import type { AuditActorPort } from '../audit/admin.js';
import type { AuditEventIds } from '../audit/record.js';
import type { JwsCrypto } from '../keys/jws-crypto.js';
import type { SigningKeyPolicy } from '../keys/rotation.js';
import type { Clock, PasswordHasher, Random } from '../ports/runtime.js';
import type { Storage } from '../ports/storage.js';
import type { LoginThrottlePolicy } from '../security/login-throttle.js';
import type { PasswordPolicy } from '../users/password-policy.js';

/** The token lifetimes a new client gets, in seconds, and the longest an access token may live. */
export interface ClientLifetimes {
  accessTokenTtl: number;
  refreshTokenTtl: number;
  maxAccessTokenTtl: number;
  /** A grant's absolute lifetime: no refresh token outlives it, so no client's refresh tokens may live longer. */
  grantTtl?: number;
}

/**
 * What the administrative use cases run over; each takes the part it needs (`Pick<AdminPorts, …>`).
 * The server builds one from its services, the tests from the in-memory storage and a fixed clock.
 */
export interface AdminPorts extends AuditActorPort {
  readonly storage: Storage;
  readonly clock: Clock;
  /** Where secrets, keys and passwords come from; by default Web Crypto's CSPRNG. */
  readonly random?: Random;
  /** The ids of the audit events the use cases record: the instance's, so they sort as made. */
  readonly auditIds?: AuditEventIds;
  /** Hashes user passwords (argon2id on the server). */
  readonly hasher: PasswordHasher;
  /** How signing keys are made; its secret also seals the secrets of stored identity providers. */
  readonly keyPolicy: SigningKeyPolicy;
  readonly lifetimes: ClientLifetimes;
  /**
   * Identity providers declared outside storage (the configuration file): they are listed, cannot
   * be changed here, and win a name clash with a stored one.
   */
  readonly declaredProviders?: readonly IdentityProviderConfig[];
  /** What a password someone chooses must be; by default `DEFAULT_PASSWORD_POLICY` (12 characters). */
  readonly passwordPolicy?: PasswordPolicy;
  /** What locks an account (to list locked users); by default `DEFAULT_LOGIN_THROTTLE`. */
  readonly loginThrottle?: LoginThrottlePolicy;
  /**
   * Runs a change of signing keys alone: one transaction that no other key change runs beside
   * (the server adds an advisory lock). By default `storage.transaction`.
   */
  readonly lockSigningKeys?: <T>(work: (storage: Storage) => Promise<T>) => Promise<T>;
  /**
   * The scopes of the API key the use cases act for (the admin API's): a key never gives, or
   * keeps alive longer, a scope it does not hold. Absent: the operator on the database (the CLI),
   * who may give any.
   */
  readonly actingScopes?: readonly ApiKeyScope[];
  /**
   * The signature primitives the token exchange checks subject tokens with (`IdgatePorts.jwsCrypto`):
   * `testTrust` checks with the same ones, so it explains what an exchange would decide by the very
   * same code. Absent: jose.
   */
  readonly jwsCrypto?: JwsCrypto;
}

/** The ports' clock reading, as a Date. */
export function nowOf(ports: Pick<AdminPorts, 'clock'>): Date {
  return new Date(ports.clock.now());
}
