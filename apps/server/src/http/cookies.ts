import type { CookieSerializeOptions } from '@fastify/cookie';

/** Where and how long a cookie of idgate's lives. */
export interface CookieScope {
  path: string;
  secure: boolean;
  /** Seconds; 0 deletes the cookie. */
  maxAge: number;
}

/**
 * The options of every cookie idgate sets (through `@fastify/cookie`'s `reply.setCookie`): HttpOnly
 * and SameSite=Lax always, Secure under an https issuer.
 * @example reply.setCookie('idgate_session', secret, cookieOptions({ path: '/oauth', secure, maxAge: 3600 }));
 */
export function cookieOptions(scope: CookieScope): CookieSerializeOptions {
  return { ...scope, httpOnly: true, sameSite: 'lax' };
}
