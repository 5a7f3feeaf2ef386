import type { FastifyRequest } from 'fastify';
import type { IdgateConfig } from '../config.js';
import { LOCALES, type Locale, MESSAGES, type Messages, preferredLocale, supportedLocale } from './i18n.js';

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
 * `ui_locales` (kept in a cookie for the sign-in: `BrowserState.keepLocale`), else the browser's
 * `Accept-Language`, else `ui.defaultLocale`.
 */
export class PageLooks {
  /** One look per language, made once: only the language differs from request to request. */
  readonly #looks: Readonly<Record<Locale, PageLook>>;

  constructor(private readonly config: Pick<IdgateConfig, 'issuer' | 'ui'>) {
    const assetsPath = assetsPathOf(config.issuer);
    const logoPath = config.ui.logoFile === undefined ? undefined : `${assetsPath}/logo`;
    const look = (locale: Locale): PageLook => ({
      t: MESSAGES[locale],
      productName: config.ui.productName,
      assetsPath,
      logoPath,
    });
    this.#looks = Object.fromEntries(LOCALES.map((locale) => [locale, look(locale)])) as Record<
      Locale,
      PageLook
    >;
  }

  localeOf(request: FastifyRequest): Locale {
    const cookie = request.headers.cookie;
    const kept = cookie === undefined ? undefined : supportedLocale(LOCALE_IN_COOKIE.exec(cookie)?.[1]);
    return kept ?? preferredLocale(request.headers['accept-language']) ?? this.config.ui.defaultLocale;
  }

  for(request: FastifyRequest): PageLook {
    return this.#looks[this.localeOf(request)];
  }

  /** The look of a page that speaks one language whoever asks (the start page, for operators). */
  in(locale: Locale): PageLook {
    return this.#looks[locale];
  }
}
