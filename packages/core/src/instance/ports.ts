import type { IdentityProviderConfig } from '@idgate/schema';
import type { ClientLifetimes } from '../admin/ports.js';
import type { AuditEventIds } from '../audit/record.js';
import type { WebAuthnLibrary } from '../factors/webauthn.js';
import type { JwsCrypto } from '../keys/jws-crypto.js';
import type { KeyRing } from '../keys/key-ring.js';
import type { SigningKeyPolicy } from '../keys/rotation.js';
import type { ApiKeyRecord, UserRecord } from '../model.js';
import type { LoginAttemptRepository } from '../ports/oidc-storage.js';
import type { Clock, PasswordHasher, Random } from '../ports/runtime.js';
import type { Storage } from '../ports/storage.js';
import type { LoginThrottlePolicy } from '../security/login-throttle.js';
import type { IdentityProviders } from '../sign-in/providers.js';
import type { AccessTokenVerification } from '../tokens/access-token.js';
import type { TrustKeySource } from '../trusts/keys.js';
import type { PasswordPolicy } from '../users/password-policy.js';

/**
 * Memory in front of the reads every token check makes, which a host keeps in step with changes
 * (the server's directory, told by its change feed). Each method is handed the work it caches:
 * what to remember is the host's call, what is true stays core's.
 */
export interface ReadCache {
  /** The user `id` as tokens describe them: remembered, else `load`ed. */
  subject(id: string, load: (id: string) => Promise<UserRecord | undefined>): Promise<UserRecord | undefined>;
  /**
   * The verification of a JWT access token: remembered, else `verify`'d. Only this step depends
   * on the token alone, so remembering it never hides a revocation or a disabled user.
   */
  verification(
    token: string,
    verify: (token: string) => Promise<AccessTokenVerification>,
  ): Promise<AccessTokenVerification>;
  /** The record of a presented API key that authenticated before and has not changed since. */
  apiKey(presented: string): ApiKeyRecord | undefined;
  /** Remembers that `presented` authenticated as `record` (by a hash of it, never the key itself). */
  rememberApiKey(presented: string, record: ApiKeyRecord): void;
}

/** What an idgate instance runs over: everything that is storage, time, chance or technology. */
export interface IdgatePorts {
  /** Every repository; a host may put a cache in front of it (a decorator of the same interface). */
  storage: Storage;
  hasher: PasswordHasher;
  /** The key ring in force now (the host reloads it on rotation). */
  keys(): KeyRing;
  /** The identity providers and their connectors. */
  providers: IdentityProviders;
  /** Default: the system clock. */
  clock?: Clock;
  /** Default: Web Crypto through a 4 KiB pool of the instance's own (see `pooledRandom`). */
  random?: Random;
  /** Default: made from `random` (see `createAuditEventIds`); a host with other writers shares its own. */
  auditIds?: AuditEventIds;
  /** Memory of the hot reads; without, every check reads storage. */
  cache?: ReadCache;
  /** Where sign-in attempts are counted; default `storage.loginAttempts`. */
  loginAttempts?: LoginAttemptRepository;
  /** Runs the first write of an idle batch of audit events (Node: `setImmediate`); default `setTimeout(run, 0)`. */
  schedule?: (run: () => void) => void;
  /**
   * Where the keys of trusts (token exchange) are fetched and cached; default discovery and JWKS
   * over `globalThis.fetch`, kept five minutes (see `createTrustKeySource`).
   */
  trustKeys?: TrustKeySource;
  /**
   * Signature primitives for the RS256 and ES256 subject tokens of the token exchange (a server's
   * native ones; in Node.js, synchronous `crypto.verify` costs less than Web Crypto's trip through
   * the thread pool). Default: jose over Web Crypto, with the same checks and refusals.
   */
  jwsCrypto?: JwsCrypto;
  /**
   * Loads the WebAuthn library for passkeys (`() => import('@simplewebauthn/server')`, on Node,
   * Bun and Deno); none: passkey ceremonies fail.
   */
  webauthn?: () => Promise<WebAuthnLibrary>;
  /** Runs a change of signing keys alone; default `storage.transaction` (the server adds a lock). */
  lockSigningKeys?: <T>(work: (storage: Storage) => Promise<T>) => Promise<T>;
}

/** Token lifetimes (seconds) and refresh rules. */
export interface TokenPolicy extends ClientLifetimes {
  idTokenTtl: number;
  grantTtl: number;
  /** Issue refresh tokens to trusted clients without `offline_access` (default false). */
  refreshForTrustedClients?: boolean;
  /**
   * Seconds within which a rotated refresh token presented again answers the same successor
   * (two tabs, two kubectl processes) instead of revoking the grant; 0: every re-presentation is
   * reuse (default).
   */
  refreshReuseWindow?: number;
}

/** What an idgate instance decides with: the settings of a deployment. */
export interface IdgatePolicy {
  /** `{base_url}/oauth`. */
  issuer: string;
  /** How signing keys are made; its secret also seals provider secrets and upstream state. */
  keyPolicy: SigningKeyPolicy;
  tokens: TokenPolicy;
  /** Device authorization (RFC 8628): code lifetime and polling interval, seconds. */
  device?: { codeTtl?: number; interval?: number };
  /** Seconds between re-checks of a federated grant's identity upstream; 0 never (default). */
  revalidateInterval?: number;
  /** The issuer name authenticator apps show beside a TOTP account (default `idgate`). */
  productName?: string;
  /**
   * Seconds a federated grant goes on refreshing after its provider last vouched for the person
   * while the provider cannot be asked; past them a refresh the provider does not answer revokes
   * the grant (`invalid_grant`). Default `DEFAULT_REVALIDATE_MAX_STALENESS` (a day); 0: no limit.
   */
  revalidateMaxStaleness?: number;
  /** PKCE at the authorization endpoint (see `AuthorizationRequestOptions`). */
  pkce?: { allowPlain?: boolean; requireForConfidentialClients?: boolean };
  /** What locks an account or address after failed sign-ins; default `DEFAULT_LOGIN_THROTTLE`. */
  loginThrottle?: LoginThrottlePolicy;
  /** What a chosen password must be; default `DEFAULT_PASSWORD_POLICY`. */
  passwordPolicy?: PasswordPolicy;
  /** Identity providers declared outside storage (they win a name clash; the admin API cannot change them). */
  declaredProviders?: readonly IdentityProviderConfig[];
}
