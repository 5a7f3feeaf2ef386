import { randomUUID } from 'node:crypto';
import {
  type Authentication,
  type BrowserSessionRecord,
  type GrantUpstream,
  generateSecret,
  hashSecret,
  type InteractionRecord,
  type InteractionRequest,
  madeBefore,
  type UserRecord,
  verifySecret,
} from '@idgate/core';
import { storedUserAgent } from '@idgate/schema';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { cookieOptions } from '../http/cookies.js';
import { InteractionId } from './form-fields.js';
import { preferredLocale } from './i18n.js';
import { LOCALE_COOKIE, type PageLooks } from './look.js';

const SESSION_COOKIE = 'idgate_session';
const INTERACTION_COOKIE = 'idgate_ix_';
/** How long a sign-in may take, from the authorization request to the last form (seconds). */
export const INTERACTION_TTL_SECONDS = 600;

/**
 * A live interaction and the CSRF token its forms carry. The token is derived from the secret of
 * the browser's interaction cookie, so the page can be shown again without storage keeping the
 * token: storage holds only its hash, like every other secret.
 */
export type LiveInteraction = InteractionRecord & { readonly csrfToken: string };

/** The CSRF token of the interaction whose cookie holds `secret` (a different hash than the stored one). */
function csrfTokenOf(secret: string): Promise<string> {
  return hashSecret(`idgate-csrf:${secret}`);
}

/**
 * The browser's side of the flow: the sign-in session (cookie with a random secret; storage
 * keeps its hash) and pending interactions (each bound to the browser that started it by a
 * cookie of its own, so a link to someone else's interaction is useless).
 */
export class BrowserState {
  readonly #path: string;
  readonly #secure: boolean;

  constructor(private readonly idgate: AppContext) {
    const issuer = new URL(idgate.config.issuer);
    this.#path = issuer.pathname;
    this.#secure = issuer.protocol === 'https:';
  }

  #cookie(reply: FastifyReply, name: string, value: string, maxAge: number): void {
    reply.setCookie(name, value, cookieOptions({ path: this.#path, secure: this.#secure, maxAge }));
  }

  #now(): Date {
    return new Date(this.idgate.clock.now());
  }

  /** The live session of this browser and its active user, if any. */
  async currentSession(
    request: FastifyRequest,
  ): Promise<{ session: BrowserSessionRecord; user: UserRecord } | undefined> {
    const secret = request.cookies[SESSION_COOKIE];
    if (secret === undefined || secret.length > 128) return undefined;
    const session = await this.idgate.storage.sessions.findBySecretHash(await hashSecret(secret));
    if (session === undefined || session.endedAt !== null || session.expiresAt <= this.#now())
      return undefined;
    // A session opened before a not-before of its user (or a global one) no longer signs anyone in.
    if (madeBefore(session.createdAt, await this.idgate.storage.notBefore.latestFor(null, session.userId)))
      return undefined;
    const user = await this.idgate.storage.users.findById(session.userId);
    if (user === undefined || user.disabled) return undefined;
    return { session, user };
  }

  /**
   * Signs the browser in as `user`, ending the session it had. `upstream` is the external
   * identity the sign-in went through (see `grantUpstream`): the session keeps it for every grant
   * opened from it, so their refreshes re-check the person upstream.
   */
  async startSession(
    request: FastifyRequest,
    reply: FastifyReply,
    user: UserRecord,
    upstream: GrantUpstream | null = null,
    amr: string[] | null = null,
  ): Promise<BrowserSessionRecord> {
    const previous = await this.currentSession(request);
    if (previous !== undefined) await this.idgate.storage.sessions.end(previous.session.id, this.#now());
    const secret = generateSecret(this.idgate.core.random);
    const now = this.#now();
    const session: BrowserSessionRecord = {
      id: randomUUID(),
      secretHash: await hashSecret(secret),
      userId: user.id,
      authTime: now,
      createdAt: now,
      expiresAt: new Date(now.getTime() + this.idgate.config.session.ttl * 1000),
      endedAt: null,
      // What the admin API lists of the session: where and what it signed in from.
      sourceAddress: request.ip,
      userAgent: storedUserAgent(request.headers['user-agent']),
      upstream,
      // How the person signed in (RFC 8176): every code and device approval of the session says so.
      amr,
    };
    await this.idgate.storage.sessions.create(session);
    this.#cookie(reply, SESSION_COOKIE, secret, this.idgate.config.session.ttl);
    return session;
  }

  /**
   * Who a session authenticates, as an authorization request or a device approval takes it: the
   * one place the session's sign-in (its time and upstream identity) is handed on to codes and
   * device approvals, whether the session was started just now (`fresh`) or is reused.
   */
  authentication(session: BrowserSessionRecord, user: UserRecord, fresh: boolean): Authentication {
    return {
      user,
      authTime: session.authTime,
      sessionId: session.id,
      fresh,
      upstream: session.upstream ?? null,
      amr: session.amr ?? null,
    };
  }

  /** Forgets the session cookie. */
  clearSession(reply: FastifyReply): void {
    this.#cookie(reply, SESSION_COOKIE, '', 0);
  }

  /**
   * Keeps the first language of an authorization request's `ui_locales` that the pages speak
   * (OIDC Core §3.1.2.1) for the rest of this browser's sign-in; {@link PageLooks} reads it.
   */
  keepLocale(reply: FastifyReply, uiLocales: unknown): void {
    const locale = typeof uiLocales === 'string' ? preferredLocale(uiLocales) : undefined;
    if (locale !== undefined) this.#cookie(reply, LOCALE_COOKIE, locale, INTERACTION_TTL_SECONDS);
  }

  /** Starts an interaction for a request that needs the user, bound to this browser. */
  async createInteraction(reply: FastifyReply, stored: InteractionRequest): Promise<LiveInteraction> {
    const secret = generateSecret(this.idgate.core.random);
    const csrfToken = await csrfTokenOf(secret);
    const now = this.#now();
    const interaction: InteractionRecord = {
      id: generateSecret(this.idgate.core.random, 18),
      secretHash: await hashSecret(secret),
      request: stored,
      userId: null,
      authTime: null,
      csrfTokenHash: await hashSecret(csrfToken),
      createdAt: now,
      expiresAt: new Date(now.getTime() + INTERACTION_TTL_SECONDS * 1000),
    };
    await this.idgate.storage.interactions.create(interaction);
    this.#cookie(reply, INTERACTION_COOKIE + interaction.id, secret, INTERACTION_TTL_SECONDS);
    return { ...interaction, csrfToken };
  }

  /** The interaction `sent`, if it is an {@link InteractionId}, live, and this browser started it. */
  async loadInteraction(
    request: FastifyRequest,
    sent: string | undefined,
  ): Promise<LiveInteraction | undefined> {
    const parsed = InteractionId.safeParse(sent);
    if (!parsed.success) return undefined;
    const id = parsed.data;
    const secret = request.cookies[INTERACTION_COOKIE + id];
    if (secret === undefined) return undefined;
    const interaction = await this.idgate.storage.interactions.findById(id);
    if (interaction === undefined || interaction.expiresAt <= this.#now()) return undefined;
    if (!(await verifySecret(secret, interaction.secretHash))) return undefined;
    return { ...interaction, csrfToken: await csrfTokenOf(secret) };
  }

  /**
   * Whether a form's `csrf` field is the interaction's CSRF token, checked against the stored
   * hash in constant time.
   */
  checkCsrf(interaction: InteractionRecord, submitted: string | undefined): Promise<boolean> {
    return verifySecret(submitted ?? '', interaction.csrfTokenHash);
  }

  /** Ends an interaction and forgets its cookie. */
  async finishInteraction(reply: FastifyReply, id: string): Promise<void> {
    await this.idgate.storage.interactions.remove(id);
    this.#cookie(reply, INTERACTION_COOKIE + id, '', 0);
  }
}
