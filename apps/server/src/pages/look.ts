import type { FastifyReply, FastifyRequest } from 'fastify';
import type { IdgateConfig } from '../config.js';
import { cookieOptions } from '../http/cookies.js';
import { type Locale, MESSAGES, type Messages, preferredLocale, supportedLocale } from './i18n.js';
import { INTERACTION_TTL_SECONDS } from './state.js';

/** The cookie that keeps the language an application asked for (`ui_locales`) for the rest of the sign-in. */
export const LOCALE_COOKIE = 'idgate_locale';
const LOCALE_IN_COOKIE = new RegExp(`(?:^|;\\s*)${LOCALE_COOKIE}=([a-z]{2})(?:;|$)`);

/** How a page looks and speaks: the operator's product name and logo, and the person's language. */
export interface PageLook {
  t: Messages;
  productName: string;
  assetsPath: string;
  /** Where the logo is served, when one is configured. */
  logoPath: string | undefined;
}

/** Where the pages of the issuer find their stylesheet and logo: `<issuer path>/assets`. */
export function assetsPathOf(issuer: string): string {
  return `${new URL(issuer).pathname}/assets`;
}

/**
 * The pages' look for one request. The language is the one the application asked for with
 * `ui_locales` (kept in a cookie for the sign-in), else the browser's `Accept-Language`, else
 * `ui.defaultLocale`.
 */
export class PageLooks {
  readonly #assetsPath: string;
  readonly #cookiePath: string;
  readonly #secure: boolean;

  constructor(private readonly config: Pick<IdgateConfig, 'issuer' | 'ui'>) {
    this.#assetsPath = assetsPathOf(config.issuer);
    const issuer = new URL(config.issuer);
    this.#cookiePath = issuer.pathname;
    this.#secure = issuer.protocol === 'https:';
  }

  localeOf(request: FastifyRequest): Locale {
    const cookie = request.headers.cookie;
    const kept = cookie === undefined ? undefined : supportedLocale(LOCALE_IN_COOKIE.exec(cookie)?.[1]);
    return kept ?? preferredLocale(request.headers['accept-language']) ?? this.config.ui.defaultLocale;
  }

  for(request: FastifyRequest): PageLook {
    return this.in(this.localeOf(request));
  }

  /** The look of a page that speaks one language whoever asks (the start page, for operators). */
  in(locale: Locale): PageLook {
    return {
      t: MESSAGES[locale],
      productName: this.config.ui.productName,
      assetsPath: this.#assetsPath,
      logoPath: this.config.ui.logoFile === undefined ? undefined : `${this.#assetsPath}/logo`,
    };
  }

  /** Keeps the first language of `ui_locales` the pages speak for the rest of this browser's sign-in. */
  keepRequested(reply: FastifyReply, uiLocales: unknown): void {
    const locale = typeof uiLocales === 'string' ? preferredLocale(uiLocales) : undefined;
    if (locale === undefined) return;
    const scope = { path: this.#cookiePath, secure: this.#secure, maxAge: INTERACTION_TTL_SECONDS };
    reply.setCookie(LOCALE_COOKIE, locale, cookieOptions(scope));
  }
}
