import type { AuditBatcher } from '../audit/batcher.js';
import { type AuditEventIds, originFields, type RequestOrigin } from '../audit/record.js';
import type { MfaCluster } from '../clusters/mfa.js';
import type { KeyRing } from '../keys/key-ring.js';
import type { ClientRecord, GrantRecord, GrantUpstream, UserRecord } from '../model.js';
import type { AuditEventRepository } from '../ports/audit-storage.js';
import type { Caller, RequestLog } from '../ports/caller.js';
import type {
  AuthorizationCodeRepository,
  DeviceAuthorizationRepository,
  GrantRepository,
  RefreshTokenRepository,
} from '../ports/oidc-storage.js';
import type { Clock, Random } from '../ports/runtime.js';
import type { FactorRepository, RevocationRepository, UserRepository } from '../ports/storage.js';
import type { LoginThrottle } from '../security/login-throttle.js';
import type { PasswordLoginContext, PasswordLoginFailure } from '../users/authenticate.js';
import type { TokenExchangeContext } from './token-exchange.js';
import type { UpstreamRevalidation } from './upstream-revalidation.js';

/**
 * A username/password check at an external provider, mapped to a local user; `upstream` is what
 * the grant it opens keeps to re-check the identity on refresh, `groupsDropped` how many of the
 * groups the provider reported were not kept (see `LIMITS.upstreamGroupsPerIdentity`).
 */
export type ExternalPasswordCheck = (
  username: string,
  password: string,
) => Promise<
  | { ok: true; user: UserRecord; upstream?: GrantUpstream; groupsDropped?: number }
  | {
      ok: false;
      failure: PasswordLoginFailure | 'not_linked';
      /** The local user the refusal was about, when one is known (for the audit trail only). */
      userId?: string;
    }
>;

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
  deviceAuthorizations: DeviceAuthorizationRepository;
  auditEvents: AuditEventRepository;
  /** Read by the password grant: a user with a second factor, or who must have one, is refused. */
  factors: Pick<FactorRepository, 'list' | 'isRequired'>;
  /** One transaction over these repositories: a change and its audit event land together. */
  transaction<T>(work: (storage: GrantStorage) => Promise<T>): Promise<T>;
}

/** What the token endpoint's grant handlers need. */
export interface TokenEndpointContext {
  issuer: string;
  keys: KeyRing;
  clock: Clock;
  /** Where tokens and ids come from; by default Web Crypto's CSPRNG. */
  random?: Random;
  /** The ids of the audit events recorded: the instance's, so they sort as made. */
  auditIds?: AuditEventIds;
  findClient(clientId: string): Promise<ClientRecord | undefined>;
  /**
   * The latest not-before covering `clientId`'s tokens for `userId` (see `NotBeforeRepository`):
   * codes, device codes and grants made before it are refused. Answered from memory on a server
   * (it may be asked inside a grant step's transaction). None when not given.
   */
  notBefore?: (clientId: string, userId: string | null) => Promise<Date | undefined>;
  passwords: PasswordLoginContext;
  storage: GrantStorage;
  lifetimes: GrantLifetimes;
  /** Issue refresh tokens to trusted clients without `offline_access` (default false). */
  refreshForTrustedClients?: boolean;
  /**
   * The password providers (LDAP) the password grant's `provider` parameter may name: the check
   * for `name`, or undefined when there is no such enabled provider.
   */
  externalPasswords?: (name: string, log?: RequestLog) => Promise<ExternalPasswordCheck | undefined>;
  /** Brute-force protection for the password grant. */
  throttle?: LoginThrottle;
  /** The caller's address, for login records and a grant's last use (see {@link Caller}). */
  sourceAddress?: string | undefined;
  /**
   * Where the request came from, for its audit events: address, user agent, request id and trace
   * id (see {@link Caller}); without it, events name `sourceAddress` only.
   */
  origin?: RequestOrigin | undefined;
  /** Where this request's refusals worth an operator's attention are told (see {@link Caller}). */
  log?: RequestLog | undefined;
  /**
   * The audiences of the registered Kubernetes clusters: an access token for one of them carries
   * the claims Kubernetes maps a user from (see `clusterClaims`). None when not given.
   */
  clusterAudiences?: () => Promise<readonly string[]>;
  /**
   * The clusters that require a second factor: a token for one needs a grant whose sign-in had
   * one (see `assertMfaFor`). None when not given.
   */
  mfaClusters?: () => Promise<readonly MfaCluster[]>;
  /** A new grant id; defaults to a random UUID. */
  newGrantId?: () => string;
  /**
   * Concurrent refresh: a refresh token presented again within `windowSeconds` of its rotation
   * answers the same successor instead of revoking the grant (two tabs, two kubectl processes).
   * Successors are then derived from the presented token with `successorKey` (see
   * {@link refreshSuccessorKey}), so no plaintext token is ever stored. Omitted or a window of 0:
   * every re-presentation is reuse.
   */
  refreshReuse?: { windowSeconds: number; successorKey: CryptoKey };
  /**
   * Re-checks a federated grant's identity upstream when due (see `revalidateUpstream`); a
   * refresh of a grant whose upstream answers `gone` is refused and the grant revoked. Omitted:
   * never re-checked.
   */
  revalidate?: (grant: GrantRecord, log?: RequestLog) => Promise<UpstreamRevalidation>;
  /**
   * Writes the `token.issued` events of client_credentials, which write nothing else, grouped
   * with concurrent ones (see `createAuditBatcher`). Omitted: each is appended on its own.
   */
  auditBatcher?: AuditBatcher;
  /** The trusts, clusters and keys of the token exchange (RFC 8693); omitted: it is refused. */
  exchange?: TokenExchangeContext;
}

/**
 * The envelope fields of an event the token endpoint records for the request in hand.
 * @example { type: 'refresh.rotated', actor, ...requestOrigin(context), details }
 */
export function requestOrigin(context: Pick<TokenEndpointContext, 'origin' | 'sourceAddress'>) {
  return originFields(context.origin ?? { address: context.sourceAddress });
}
