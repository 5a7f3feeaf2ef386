import {
  computeCodeChallenge,
  generateSecret,
  hashSecret,
  type LoginTransactionRecord,
  verifySecret,
} from '@idgate/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { cookieOptions } from '../http/cookies.js';

/** A sign-in at an external provider may take this long (seconds). */
export const LOGIN_TRANSACTION_TTL_SECONDS = 600;
const COOKIE = 'idgate_tx_';

/** Why a callback's state was refused; each is a clear message for the user. */
export type TransactionFailure =
  | 'missing'
  | 'unknown'
  | 'replayed'
  | 'expired'
  | 'other_browser'
  | 'other_provider';

export const TRANSACTION_MESSAGES: Record<TransactionFailure, string> = {
  missing: 'the callback has no state: start the sign-in again',
  unknown: 'the state does not belong to a sign-in started here',
  replayed: 'this sign-in was already completed: start again',
  expired: 'the sign-in took too long: start again',
  other_browser: 'the sign-in was started in another browser',
  other_provider: 'the state belongs to a sign-in at another provider',
};

/**
 * External sign-ins in progress. `begin` stores the transaction (state and binding secret as
 * hashes) and sets a cookie, HttpOnly and scoped to the callback path, that binds it to the
 * browser; `complete` consumes it once, for that browser and provider only. A callback from
 * another browser, or for another provider, leaves the transaction as it was: a stranger who
 * learnt a state cannot cancel someone's sign-in with it.
 */
export class LoginTransactions {
  readonly #secure: boolean;
  readonly #callbackPath: string;

  constructor(private readonly idgate: AppContext) {
    const issuer = new URL(idgate.config.issuer);
    this.#secure = issuer.protocol === 'https:';
    this.#callbackPath = `${issuer.pathname}/callback`;
  }

  redirectUri(provider: string): string {
    return `${this.idgate.config.issuer}/callback/${provider}`;
  }

  async begin(
    reply: FastifyReply,
    provider: string,
    interactionId: string | null,
  ): Promise<{ state: string; nonce: string; codeChallenge: string }> {
    const { random } = this.idgate.core;
    const state = generateSecret(random);
    const binding = generateSecret(random);
    const codeVerifier = generateSecret(random);
    const nonce = generateSecret(random, 16);
    const now = this.idgate.clock.now();
    await this.idgate.storage.loginTransactions.create({
      stateHash: await hashSecret(state),
      provider,
      bindingHash: await hashSecret(binding),
      nonce,
      codeVerifier,
      interactionId,
      createdAt: new Date(now),
      expiresAt: new Date(now + LOGIN_TRANSACTION_TTL_SECONDS * 1000),
      consumedAt: null,
    });
    reply.setCookie(
      `${COOKIE}${provider}`,
      binding,
      cookieOptions({
        path: `${this.#callbackPath}/${provider}`,
        secure: this.#secure,
        maxAge: LOGIN_TRANSACTION_TTL_SECONDS,
      }),
    );
    return { state, nonce, codeChallenge: await computeCodeChallenge(codeVerifier) };
  }

  async complete(
    request: FastifyRequest,
    reply: FastifyReply,
    provider: string,
    state: string | undefined,
  ): Promise<{ ok: true; transaction: LoginTransactionRecord } | { ok: false; failure: TransactionFailure }> {
    if (state === undefined || state === '') return { ok: false, failure: 'missing' };
    if (state.length > 512) return { ok: false, failure: 'unknown' };
    const binding = request.cookies[`${COOKIE}${provider}`];
    const now = this.idgate.clock.now();
    const stateHash = await hashSecret(state);
    const { loginTransactions } = this.idgate.storage;
    // Whose it is first: only the browser that began it, at this provider, may consume it.
    const found = await loginTransactions.find(stateHash);
    if (found === undefined) return { ok: false, failure: 'unknown' };
    if (found.consumedAt !== null) return { ok: false, failure: 'replayed' };
    if (found.provider !== provider) return { ok: false, failure: 'other_provider' };
    if (binding === undefined || binding.length > 128 || !(await verifySecret(binding, found.bindingHash)))
      return { ok: false, failure: 'other_browser' };
    const use = await loginTransactions.consume(stateHash, new Date(now));
    if (use.status === 'unknown') return { ok: false, failure: 'unknown' };
    if (use.status === 'replayed') return { ok: false, failure: 'replayed' };
    reply.setCookie(
      `${COOKIE}${provider}`,
      '',
      cookieOptions({ path: `${this.#callbackPath}/${provider}`, secure: this.#secure, maxAge: 0 }),
    );
    if (use.transaction.expiresAt.getTime() <= now) return { ok: false, failure: 'expired' };
    return { ok: true, transaction: use.transaction };
  }
}
