// The second-factor sign-in (`idgate.sign-in-totp`): not a wrk load but a Node driver that performs
// whole browser sign-ins (authorize → login page → password → second-factor page → TOTP code →
// redirect with the code) at a fixed concurrency, and records each one's latency.
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { CookieJar, FORM, hiddenFields, send, signIn } from './browser.mjs';
import { REDIRECT_URI } from './idgate.mjs';
import { cpuSeconds, memory, running } from './processes.mjs';
import { mapLimit } from './writes.mjs';

/** RFC 6238 as idgate uses it: HMAC-SHA-1, 6 digits, 30-second steps. */
export const PERIOD_SECONDS = 30;

/** RFC 4648 base32 (case, spaces and padding ignored). @param {string} text */
export function base32Bytes(text) {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = '';
  for (const char of text.replace(/[\s=]/g, '').toUpperCase()) {
    const index = alphabet.indexOf(char);
    if (index < 0) throw new Error(`not base32: ${char}`);
    bits += index.toString(2).padStart(5, '0');
  }
  const bytes = [];
  for (let i = 0; i + 8 <= bits.length; i += 8) bytes.push(Number.parseInt(bits.slice(i, i + 8), 2));
  return Buffer.from(bytes);
}

/**
 * The TOTP code of `step` (RFC 6238 §4: HOTP of the step counter, RFC 4226 §5.3), written here with
 * node:crypto, independent of idgate's own implementation.
 * @param {Buffer} secret @param {number} step
 */
export function totpCode(secret, step) {
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(step));
  const mac = createHmac('sha1', secret).update(counter).digest();
  const offset = /** @type {number} */ (mac[mac.length - 1]) & 0x0f;
  const binary = mac.readUInt32BE(offset) & 0x7fffffff;
  return String(binary % 1_000_000).padStart(6, '0');
}

export const stepOf = (/** @type {number} */ ms) => Math.floor(ms / 1000 / PERIOD_SECONDS);

/** The nearest-rank percentile of sorted `values`. @param {number[]} sorted @param {number} p */
export function percentile(sorted, p) {
  if (sorted.length === 0) return 0;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return /** @type {number} */ (sorted[rank]);
}

/**
 * @typedef {{ username: string, password: string, secret: Buffer, lastStep: number }} TotpUser
 */

/**
 * One person with a confirmed TOTP factor: created over the admin REST API, signed in on the login
 * page, enrolled on the account page (add an authenticator, read its key from the page, confirm
 * with the current code).
 * @param {string} baseUrl @param {string} usersKey @param {string} username
 * @returns {Promise<TotpUser>}
 */
export async function enrolTotpUser(baseUrl, usersKey, username) {
  const password = `secret-${randomBytes(18).toString('base64url')}`;
  const created = await fetch(`${baseUrl}/admin/v1/users`, {
    method: 'POST',
    headers: { authorization: `Bearer ${usersKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ username, password }),
    signal: AbortSignal.timeout(30_000),
  });
  if (created.status !== 201)
    throw new Error(`creating ${username}: ${created.status} ${await created.text()}`);
  const jar = await signIn(baseUrl, '/oauth', username, password);
  const account = await send(jar, `${baseUrl}/oauth/account`);
  const bound = hiddenFields(account.text);
  if (account.status !== 200 || bound.interaction === undefined || bound.csrf === undefined)
    throw new Error(`account page: ${account.status}`);
  const page = await send(jar, `${baseUrl}/oauth/account/totp`, {
    method: 'POST',
    headers: FORM,
    body: new URLSearchParams({ interaction: bound.interaction, csrf: bound.csrf, name: 'bench' }).toString(),
  });
  const fields = hiddenFields(page.text);
  const factor = /name="factor" value="([^"]*)"/.exec(page.text)?.[1];
  const key = /<code id="totp-secret">([^<]*)<\/code>/.exec(page.text)?.[1];
  if (page.status !== 200 || factor === undefined || key === undefined || fields.interaction === undefined)
    throw new Error(`TOTP enrolment page: ${page.status}`);
  const secret = base32Bytes(key);
  const step = stepOf(Date.now());
  const confirmed = await send(jar, `${baseUrl}/oauth/account/totp/confirm`, {
    method: 'POST',
    headers: FORM,
    body: new URLSearchParams({
      interaction: fields.interaction,
      csrf: fields.csrf ?? '',
      factor,
      code: totpCode(secret, step),
    }).toString(),
  });
  if (confirmed.status !== 200) throw new Error(`confirming the TOTP factor: ${confirmed.status}`);
  return { username, password, secret, lastStep: step };
}

/**
 * One whole sign-in for an authorization request, as a browser without a session makes it: six
 * requests, the last answering 303 to the redirect URI with a code. Returns nothing; throws on any
 * other answer.
 * @param {string} baseUrl @param {string} clientId @param {TotpUser} user @param {number} step
 */
export async function signInWithTotp(baseUrl, clientId, user, step) {
  const jar = new CookieJar();
  const verifier = randomBytes(32).toString('base64url');
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    scope: 'openid groups offline_access',
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    state: randomBytes(8).toString('hex'),
  });
  const authorize = await send(jar, `${baseUrl}/oauth/authorize?${query}`);
  if (authorize.status !== 303 || authorize.location === null)
    throw new Error(`authorize: ${authorize.status}`);
  const login = await send(jar, new URL(authorize.location, baseUrl).toString());
  const form = hiddenFields(login.text);
  if (login.status !== 200 || form.interaction === undefined || form.csrf === undefined)
    throw new Error(`login page: ${login.status}`);
  const password = await send(jar, `${baseUrl}/oauth/login`, {
    method: 'POST',
    headers: FORM,
    body: new URLSearchParams({
      interaction: form.interaction,
      csrf: form.csrf,
      username: user.username,
      password: user.password,
    }).toString(),
  });
  if (password.status !== 303 || password.location === null || !password.location.includes('second-factor'))
    throw new Error(`password: ${password.status}`);
  const factorPage = await send(jar, new URL(password.location, baseUrl).toString());
  const second = hiddenFields(factorPage.text);
  if (factorPage.status !== 200 || second.interaction === undefined || second.csrf === undefined)
    throw new Error(`second-factor page: ${factorPage.status}`);
  const done = await send(jar, `${baseUrl}/oauth/second-factor`, {
    method: 'POST',
    headers: FORM,
    body: new URLSearchParams({
      interaction: second.interaction,
      csrf: second.csrf,
      code: totpCode(user.secret, step),
    }).toString(),
  });
  if (done.status !== 303 || done.location === null || !done.location.startsWith(REDIRECT_URI))
    throw new Error(`second factor: ${done.status}`);
  if (new URL(done.location).searchParams.get('code') === null) throw new Error('redirect without a code');
}

/**
 * Runs `signIn` from `concurrency` workers for `seconds`, each time with a person whose TOTP code
 * of the current step is still unused (a code is accepted once per step). Stops early when no such
 * person is left.
 * @param {{ users: TotpUser[], concurrency: number, seconds: number, pid: number | undefined,
 *   signIn: (user: TotpUser, step: number) => Promise<void> }} options
 */
export async function driveSignIns(options) {
  /** @type {number[]} */
  const latencies = [];
  /** @type {Record<string, number>} */
  const failures = {};
  let errors = 0;
  let ranOut = false;
  let rss = 0;
  const sampler = setInterval(() => {
    const now = memory(options.pid);
    if (now !== undefined) rss = Math.max(rss, now.rss);
  }, 100);
  const cpuBefore = cpuSeconds(options.pid);
  const started = performance.now();
  const deadline = started + options.seconds * 1000;
  let next = 0;
  const pick = () => {
    const step = stepOf(Date.now());
    for (let tried = 0; tried < options.users.length; tried++) {
      const user = /** @type {TotpUser} */ (options.users[next]);
      next = (next + 1) % options.users.length;
      if (user.lastStep < step) {
        user.lastStep = step;
        return { user, step };
      }
    }
    return undefined;
  };
  const worker = async () => {
    while (performance.now() < deadline && !ranOut) {
      const picked = pick();
      if (picked === undefined) {
        ranOut = true;
        return;
      }
      const begin = performance.now();
      try {
        await options.signIn(picked.user, picked.step);
        latencies.push(performance.now() - begin);
      } catch (error) {
        errors++;
        const what = error instanceof Error ? error.message : String(error);
        failures[what] = (failures[what] ?? 0) + 1;
      }
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  clearInterval(sampler);
  const duration = (performance.now() - started) / 1000;
  const cpuAfter = cpuSeconds(options.pid);
  const sorted = [...latencies].sort((a, b) => a - b);
  const round = (/** @type {number} */ ms) => Math.round(ms * 100) / 100;
  return {
    rps: latencies.length / duration,
    requests: latencies.length,
    duration,
    errors,
    latency: {
      p50: round(percentile(sorted, 50)),
      p90: round(percentile(sorted, 90)),
      p99: round(percentile(sorted, 99)),
      max: round(sorted.at(-1) ?? 0),
    },
    cpu:
      cpuBefore === undefined || cpuAfter === undefined || latencies.length === 0
        ? {}
        : { serverMicrosPerRequest: ((cpuAfter - cpuBefore) * 1e6) / latencies.length },
    detail: {
      ...(errors > 0 ? { failures } : {}),
      ...(ranOut ? { ranOut: true } : {}),
      concurrency: options.concurrency,
    },
    ...(rss > 0 ? { rss } : {}),
  };
}

/** Concurrent sign-ins of the driver. */
export const SIGN_IN_CONCURRENCY = 8;

/**
 * `idgate.sign-in-totp`: enrols the people it needs (each signs in at most once per 30-s step:
 * enough for 40 sign-ins a second over warm-up and run, at most 600), then a warm-up and a
 * measured run of whole password + TOTP sign-ins.
 * @param {import('./scenario.mjs').Runner} run
 * @param {{ usersKey: string, webClientId: string }} seeded
 */
export async function signInScenarios(run, seeded) {
  const id = 'idgate.sign-in-totp';
  if (!run.wanted(id)) return;
  const { options, log } = run;
  const idgate = /** @type {import('./scenario.mjs').Server} */ (run.servers.idgate);
  const count = Math.min(600, Math.ceil(40 * Math.min(PERIOD_SECONDS, options.warmup + options.duration)));
  const started = Date.now();
  const prefix = `mfa-${randomBytes(3).toString('hex')}`;
  const users = await mapLimit(Array.from({ length: count }), 4, (_, i) =>
    enrolTotpUser(idgate.url, seeded.usersKey, `${prefix}-${i}`),
  );
  log(`enrolled ${count} people with a TOTP factor in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  const label = 'password (argon2id) + TOTP code';
  log(
    `${id}: whole sign-ins (authorize, login page, password, second-factor page, TOTP code, redirect with a code)`,
  );
  const drive = (/** @type {number} */ seconds) =>
    driveSignIns({
      users,
      concurrency: SIGN_IN_CONCURRENCY,
      seconds,
      pid: idgate.process.pid,
      signIn: (user, step) => signInWithTotp(idgate.url, seeded.webClientId, user, step),
    });
  if (options.warmup > 0) await drive(options.warmup);
  const result = await drive(options.duration);
  if (!running(idgate.process)) throw new Error(`idgate exited during ${id}`);
  /** @type {import('./scenario.mjs').Measurement} */
  const measurement = { id, system: 'idgate', label, ...result };
  run.measurements.push(measurement);
  log(
    `  ${result.rps.toFixed(1)} sign-ins/s, p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, ` +
      `${result.errors} errors, ${result.cpu.serverMicrosPerRequest?.toFixed(0) ?? '—'} µs CPU/sign-in`,
  );
  if (result.errors > 0) run.notes.push(`${id}: ${result.errors} errors ${JSON.stringify(result.detail)}`);
  if (result.detail.ranOut)
    run.notes.push(
      `${id}: every one of the ${count} people had signed in in the current 30-s step after ` +
        `${result.duration.toFixed(1)} s (the figures cover that time)`,
    );
}
