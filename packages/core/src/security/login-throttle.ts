import type { LoginAttemptRepository } from '../ports/oidc-storage.js';
import type { Clock } from '../ports/runtime.js';

/** When sign-ins are refused for a while. */
export interface LoginThrottlePolicy {
  /** Failed attempts on one account within the window that lock it. */
  maxFailures: number;
  /** The window, and how long a lock lasts after the failure that set it, in seconds. */
  windowSeconds: number;
  /**
   * Failed attempts from one source address within the window that block it (any account); the
   * browser's pages and the password grant are counted apart.
   */
  maxFailuresPerAddress: number;
  /** Failed password-grant attempts through one client within the window that block the client. */
  maxFailuresPerClient?: number;
  /**
   * Wrong device user codes from every address together within the window that stop the device
   * verification page from reading any code, so that many addresses, each under its own
   * allowance, cannot guess together (RFC 8628 §5.1).
   */
  maxWrongUserCodes?: number;
}

/**
 * How a device user code typed on the verification page is recorded among the login attempts
 * (where a colon never occurs in a username), so that wrong user codes and wrong passwords from one
 * address count toward the same lock.
 */
export const USER_CODE_ATTEMPT = { username: 'device:user_code', userId: null, provider: 'device' } as const;

/**
 * How an administrator's lift of an address block is recorded among the login attempts: a
 * successful attempt of this pseudo-account (a colon never occurs in a username) from the address,
 * or from `everyAddress` for every address at once. Failures from an address count only after
 * the latest lift that covers it, so a lift ends the block on every replica at once and the
 * attempts before it stay on record.
 */
export const ADDRESS_LIFT = {
  username: 'address:lifted',
  provider: 'admin',
  reason: 'lifted',
  everyAddress: '*',
} as const;

/** The reason of a user code that was read and matched no live request. */
export const WRONG_USER_CODE = 'unknown_user_code';

/**
 * 5 failures in 15 minutes lock an account (for unfamiliar addresses and familiar ones apart); 100
 * from one address block that address; 500 through one client's password grant block the client;
 * 1000 wrong device user codes from all addresses together stop the verification page for the
 * window (of 20^8 codes, ten live ones are then hit about once in 70 years of guessing at that
 * rate).
 */
export const DEFAULT_LOGIN_THROTTLE: Required<LoginThrottlePolicy> = {
  maxFailures: 5,
  windowSeconds: 900,
  maxFailuresPerAddress: 100,
  maxFailuresPerClient: 500,
  maxWrongUserCodes: 1000,
};

/** The outcome of a throttle check: a lock says until when (`until`) and how long that is from now. */
export type ThrottleDecision =
  | { locked: false }
  | { locked: true; retryAfterSeconds: number; until: Date; scope: 'account' | 'address' | 'client' };

/** Where an attempt comes from, beyond its address. */
export interface ThrottleOrigin {
  /** The account's provider: `password` (the default) for a local account, else the provider's name. */
  provider?: string;
  /** The client of a password grant: its failures are counted per client and per address apart. */
  clientId?: string;
}

/** One attempt to record. */
export interface LoginAttempt {
  username: string;
  userId: string | null;
  sourceAddress: string;
  provider: string;
  success: boolean;
  reason: string | null;
  /** The client of a password grant; absent for the login and device pages. */
  clientId?: string | null;
}

/**
 * Brute-force protection over the shared login-attempt records, so every replica sees the same
 * counts. An account — a username at one provider: an LDAP `bob` and a local `bob` are two — is
 * locked once `maxFailures` attempts failed within one window since its last successful sign-in;
 * the lock ends `windowSeconds` after the latest failure. Smart lockout: failures from addresses
 * the account has signed in from before are counted apart from the others, so an attacker
 * elsewhere locks the account only for unfamiliar addresses, never out of the places its owner
 * works from. Addresses are blocked after `maxFailuresPerAddress` failures on any account — the
 * browser's pages and the password grant counted apart — and a client's password grant after
 * `maxFailuresPerClient`. Refused attempts are recorded too, so an ongoing attack keeps the lock
 * in place.
 * @example
 * const decision = await throttle.check('alice', '203.0.113.7');
 * if (decision.locked) reply.header('Retry-After', decision.retryAfterSeconds);
 */
export class LoginThrottle {
  constructor(
    private readonly attempts: LoginAttemptRepository,
    private readonly policy: LoginThrottlePolicy,
    private readonly clock: Clock,
  ) {}

  /**
   * Whether a sign-in for `username` (from `sourceAddress`, when given) may be tried now: the
   * account (of `origin.provider`) as seen from that address, the address, and the client of a
   * password grant.
   */
  async check(
    username: string,
    sourceAddress?: string,
    origin: ThrottleOrigin = {},
  ): Promise<ThrottleDecision> {
    const folded = username.toLowerCase();
    const provider = origin.provider ?? 'password';
    const familiar =
      sourceAddress === undefined
        ? undefined
        : await this.attempts.hasSucceededFrom(folded, provider, sourceAddress);
    const account = await this.#lockedUntil(
      (since) =>
        this.attempts.failuresForUsername(folded, since, {
          provider,
          ...(familiar === undefined ? {} : { familiar }),
        }),
      this.policy.maxFailures,
    );
    if (account !== undefined) return { locked: true, ...account, scope: 'account' };
    if (origin.clientId !== undefined) {
      const clientId = origin.clientId;
      const client = await this.#lockedUntil(
        (since) => this.attempts.failuresForClient(clientId, since),
        this.policy.maxFailuresPerClient ?? DEFAULT_LOGIN_THROTTLE.maxFailuresPerClient,
      );
      if (client !== undefined) return { locked: true, ...client, scope: 'client' };
    }
    if (sourceAddress !== undefined) {
      const channel = origin.clientId === undefined ? 'browser' : 'grant';
      const address = await this.#lockedUntil(
        (since) => this.attempts.failuresFromAddress(sourceAddress, since, { channel }),
        this.policy.maxFailuresPerAddress,
      );
      if (address !== undefined) return { locked: true, ...address, scope: 'address' };
    }
    return { locked: false };
  }

  /**
   * Whether `sourceAddress` may try again now, counting only its failures (of any kind: wrong
   * passwords, wrong device user codes), never an account's: for guesses that name no account.
   */
  async checkAddress(sourceAddress: string): Promise<ThrottleDecision> {
    const address = await this.#lockedUntil(
      (since) => this.attempts.failuresFromAddress(sourceAddress, since, { channel: 'browser' }),
      this.policy.maxFailuresPerAddress,
    );
    return address === undefined ? { locked: false } : { locked: true, ...address, scope: 'address' };
  }

  /**
   * The source addresses blocked now, the browser's and the password grant's apart, with when
   * each block ends unless more failures come; at most `limit`, most failures first.
   */
  async blockedAddresses(
    limit = 500,
  ): Promise<Array<{ address: string; channel: 'browser' | 'grant'; failures: number; until: Date }>> {
    const now = this.clock.now();
    const windowMs = this.policy.windowSeconds * 1000;
    // A block is at most a window old at its latest failure, which is at most a window old.
    const candidates = await this.attempts.failingAddresses(
      new Date(now - 2 * windowMs),
      this.policy.maxFailuresPerAddress,
      limit,
    );
    const blocked: Array<{ address: string; channel: 'browser' | 'grant'; failures: number; until: Date }> =
      [];
    for (const { address, channel } of candidates) {
      let failures = 0;
      const lock = await this.#lockedUntil(async (since) => {
        const counted = await this.attempts.failuresFromAddress(address, since, { channel });
        failures = counted.count;
        return counted;
      }, this.policy.maxFailuresPerAddress);
      if (lock !== undefined) blocked.push({ address, channel, failures, until: lock.until });
    }
    return blocked;
  }

  /**
   * Lifts the block of `address` (or of every address, `undefined`), recording the lift as an
   * attempt (see {@link ADDRESS_LIFT}); lifting every block also restarts the count of wrong
   * device user codes from all addresses together.
   */
  async liftAddressBlock(address: string | undefined): Promise<void> {
    await this.record({
      username: ADDRESS_LIFT.username,
      userId: null,
      sourceAddress: address ?? ADDRESS_LIFT.everyAddress,
      provider: ADDRESS_LIFT.provider,
      success: true,
      reason: ADDRESS_LIFT.reason,
    });
    if (address === undefined)
      await this.record({
        ...USER_CODE_ATTEMPT,
        sourceAddress: ADDRESS_LIFT.everyAddress,
        success: true,
        reason: ADDRESS_LIFT.reason,
      });
  }

  /**
   * Whether the device verification page may read a user code now: fewer than
   * `maxWrongUserCodes` codes from every address together were read and found wrong within the
   * window. Codes refused unread (a lock) do not count here, so one blocked address cannot stop
   * the page for everyone; they count toward their address.
   */
  async checkWrongUserCodes(): Promise<{ locked: false } | { locked: true; retryAfterSeconds: number }> {
    const limit = this.policy.maxWrongUserCodes ?? DEFAULT_LOGIN_THROTTLE.maxWrongUserCodes;
    const lock = await this.#lockedUntil(
      (since) =>
        this.attempts.failuresForUsername(USER_CODE_ATTEMPT.username, since, {
          provider: USER_CODE_ATTEMPT.provider,
          reason: WRONG_USER_CODE,
        }),
      limit,
    );
    return lock === undefined
      ? { locked: false }
      : { locked: true, retryAfterSeconds: lock.retryAfterSeconds };
  }

  /**
   * When a lock ends and the seconds left of it, or undefined. Locked means: the latest failure L
   * is less than a window old, and the window that ends at L holds at least `limit` failures; it
   * ends a window after L.
   */
  async #lockedUntil(
    failures: (since: Date) => Promise<{ count: number; latest: Date | null }>,
    limit: number,
  ): Promise<{ retryAfterSeconds: number; until: Date } | undefined> {
    const now = this.clock.now();
    const windowMs = this.policy.windowSeconds * 1000;
    const { latest } = await failures(new Date(now - windowMs));
    if (latest === null || latest.getTime() + windowMs <= now) return undefined;
    const { count } = await failures(new Date(latest.getTime() - windowMs));
    if (count < limit) return undefined;
    const until = latest.getTime() + windowMs;
    return { retryAfterSeconds: Math.max(1, Math.ceil((until - now) / 1000)), until: new Date(until) };
  }

  /**
   * Records an attempt (the username lower-cased); a failure notes whether its address was
   * familiar to the account (see {@link LoginThrottle}).
   */
  async record(attempt: LoginAttempt): Promise<void> {
    const username = attempt.username.toLowerCase();
    const familiar =
      !attempt.success &&
      (await this.attempts.hasSucceededFrom(username, attempt.provider, attempt.sourceAddress));
    await this.attempts.record({
      id: crypto.randomUUID(),
      ...attempt,
      clientId: attempt.clientId ?? null,
      familiar,
      username,
      createdAt: new Date(this.clock.now()),
    });
  }
}
