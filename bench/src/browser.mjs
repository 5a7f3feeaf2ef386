// The browser side of the setup of the write paths (never measured): signing in through the login
// form, the PKCE pairs for authorization codes, and approving device codes on the verification page.
import { createHash, randomBytes } from 'node:crypto';

/** A minimal cookie jar: name → value, from Set-Cookie headers (attributes ignored). */
export class CookieJar {
  /** @type {Map<string, string>} */
  #cookies = new Map();

  /** @param {Response} response */
  take(response) {
    for (const header of response.headers.getSetCookie()) {
      const [pair] = header.split(';');
      const index = (pair ?? '').indexOf('=');
      if (index > 0) this.#cookies.set(header.slice(0, index).trim(), (pair ?? '').slice(index + 1));
    }
  }

  header() {
    return [...this.#cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  /** A copy, so that parallel approvals do not share interaction cookies. */
  clone() {
    const copy = new CookieJar();
    for (const [name, value] of this.#cookies) copy.#cookies.set(name, value);
    return copy;
  }
}

/**
 * @param {CookieJar} jar @param {string} url @param {RequestInit} [init]
 * @returns {Promise<{ status: number, location: string | null, text: string }>}
 */
export async function send(jar, url, init = {}) {
  const response = await fetch(url, {
    ...init,
    redirect: 'manual',
    headers: { ...(init.headers ?? {}), cookie: jar.header() },
    signal: AbortSignal.timeout(15_000),
  });
  jar.take(response);
  return { status: response.status, location: response.headers.get('location'), text: await response.text() };
}

export const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

/** The hidden `interaction` and `csrf` fields of a page's form. @param {string} html */
export function hiddenFields(html) {
  const value = (/** @type {string} */ name) =>
    new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1]?.replaceAll('&amp;', '&');
  return { interaction: value('interaction'), csrf: value('csrf') };
}

/**
 * Signs in on the standalone login page; returns the jar with the session cookie.
 * @param {string} baseUrl @param {string} issuerPath @param {string} username @param {string} password
 */
export async function signIn(baseUrl, issuerPath, username, password) {
  const jar = new CookieJar();
  const page = await send(jar, `${baseUrl}${issuerPath}/login`);
  const { interaction, csrf } = hiddenFields(page.text);
  if (page.status !== 200 || interaction === undefined || csrf === undefined)
    throw new Error(`login page: ${page.status}`);
  const done = await send(jar, `${baseUrl}${issuerPath}/login`, {
    method: 'POST',
    headers: FORM,
    body: new URLSearchParams({ interaction, csrf, username, password }).toString(),
  });
  if (done.status !== 200 || !jar.header().includes('idgate_session='))
    throw new Error(`sign-in: ${done.status} ${done.text.slice(0, 200)}`);
  return jar;
}

/** `count` PKCE pairs (RFC 7636, S256), one `challenge verifier` line each. @param {number} count */
export function pkcePairs(count) {
  const lines = [];
  for (let i = 0; i < count; i++) {
    const verifier = randomBytes(32).toString('base64url');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    lines.push(`${challenge} ${verifier}`);
  }
  return `${lines.join('\n')}\n`;
}

/**
 * Approves the device authorization of `userCode` as the signed-in person of `session`: enter the
 * code, open the confirmation page, allow.
 * @param {CookieJar} session @param {string} baseUrl @param {string} issuerPath @param {string} userCode
 */
export async function approveDevice(session, baseUrl, issuerPath, userCode) {
  const jar = session.clone();
  const device = `${baseUrl}${issuerPath}/device`;
  const entered = await send(jar, device, {
    method: 'POST',
    headers: FORM,
    body: new URLSearchParams({ user_code: userCode }).toString(),
  });
  if (entered.status !== 303 || entered.location === null)
    throw new Error(`device code entry: ${entered.status} ${entered.text.slice(0, 200)}`);
  const confirm = await send(jar, new URL(entered.location, baseUrl).toString());
  const { interaction, csrf } = hiddenFields(confirm.text);
  if (confirm.status !== 200 || interaction === undefined || csrf === undefined)
    throw new Error(`device confirmation page: ${confirm.status}`);
  const allowed = await send(jar, device, {
    method: 'POST',
    headers: FORM,
    body: new URLSearchParams({ interaction, csrf, decision: 'allow' }).toString(),
  });
  if (allowed.status !== 200) throw new Error(`device approval: ${allowed.status}`);
}
