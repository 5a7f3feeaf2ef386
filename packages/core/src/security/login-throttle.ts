import type { LoginAttemptRepository } from '../ports/oidc-storage.js';
import type { Clock } from '../ports/runtime.js';

/** When sign-ins are refused for a while. */
export interface LoginThrottlePolicy {
  /** Failed attempts on one account within the window that lock it. */
  maxFailures: number;
  /** The window, and how long a lock lasts after the failure that set it, in seconds. */
  windowSeconds: number;
  /** Failed attempts from one source address within the window that block it (any account). */
  maxFailuresPerAddress: number;
}

/** 5 failures in 15 minutes lock an account; 100 from one address block that address. */
export const DEFAULT_LOGIN_THROTTLE: LoginThrottlePolicy = {
  maxFailures: 5,
  windowSeconds: 900,
  maxFailuresPerAddress: 100,
};

/** The outcome of a throttle check. */
export type ThrottleDecision =
  | { locked: false }
  | { locked: true; retryAfterSeconds: number; scope: 'account' | 'address' };

/** One attempt to record. */
export interface LoginAttempt {
  username: string;
  userId: string | null;
  sourceAddress: string;
  provider: string;
  success: boolean;
  reason: string | null;
}

/**
 * Brute-force protection over the shared login-attempt records, so every replica sees the same
 * counts. An account is locked once `maxFailures` attempts failed within one window since its
 * last successful sign-in; the lock ends `windowSeconds` after the latest failure. Refused
 * attempts are recorded too, so an ongoing attack keeps the lock in place.
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

  /** Whether a sign-in for `username` (from `sourceAddress`, when given) may be tried now. */
  async check(username: string, sourceAddress?: string): Promise<ThrottleDecision> {
    const account = await this.#lockedUntil(
      (since) => this.attempts.failuresForUsername(username.toLowerCase(), since),
      this.policy.maxFailures,
    );
    if (account !== undefined) return { locked: true, retryAfterSeconds: account, scope: 'account' };
    if (sourceAddress !== undefined) {
      const address = await this.#lockedUntil(
        (since) => this.attempts.failuresFromAddress(sourceAddress, since),
        this.policy.maxFailuresPerAddress,
      );
      if (address !== undefined) return { locked: true, retryAfterSeconds: address, scope: 'address' };
    }
    return { locked: false };
  }

  /**
   * Whether `sourceAddress` may try again now, counting only its failures (of any kind: wrong
   * passwords, wrong device user codes), never an account's: for guesses that name no account.
   */
  async checkAddress(sourceAddress: string): Promise<ThrottleDecision> {
    const address = await this.#lockedUntil(
      (since) => this.attempts.failuresFromAddress(sourceAddress, since),
      this.policy.maxFailuresPerAddress,
    );
    return address === undefined
      ? { locked: false }
      : { locked: true, retryAfterSeconds: address, scope: 'address' };
  }

  /**
   * Seconds left of a lock, or undefined. Locked means: the latest failure L is less than a
   * window old, and the window that ends at L holds at least `limit` failures.
   */
  async #lockedUntil(
    failures: (since: Date) => Promise<{ count: number; latest: Date | null }>,
    limit: number,
  ): Promise<number | undefined> {
    const now = this.clock.now();
    const windowMs = this.policy.windowSeconds * 1000;
    const { latest } = await failures(new Date(now - windowMs));
    if (latest === null || latest.getTime() + windowMs <= now) return undefined;
    const { count } = await failures(new Date(latest.getTime() - windowMs));
    if (count < limit) return undefined;
    return Math.max(1, Math.ceil((latest.getTime() + windowMs - now) / 1000));
  }

  /** Records an attempt (the username lower-cased). */
  async record(attempt: LoginAttempt): Promise<void> {
    await this.attempts.record({
      id: crypto.randomUUID(),
      ...attempt,
      username: attempt.username.toLowerCase(),
      createdAt: new Date(this.clock.now()),
    });
  }
}
