// The second-factor sign-in (`idgate.sign-in-totp`): not a wrk load but a Node driver that performs
// whole browser sign-ins (authorize → login page → password → second-factor page → TOTP code →
// redirect with the code) at a fixed concurrency, and records each one's latency.
import { createHash, createHmac, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { join } from 'node:path';
import { CookieJar, FORM, hiddenFields, send, signIn } from './browser.mjs';
import { idgateEnvironment, REDIRECT_URI, startIdgate } from './idgate.mjs';
import { cpuSeconds, freePort, memory, runNode, running, stop } from './processes.mjs';
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
 * A new person (created over the admin REST API with a random password), signed in on the login
 * form, with their account page open.
 * @param {string} baseUrl @param {string} usersKey @param {string} username
 */
async function openAccountPage(baseUrl, usersKey, username) {
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
  return { password, jar, account };
}

/**
 * One person with a confirmed TOTP factor: created over the admin REST API, signed in on the login
 * page, enrolled on the account page (add an authenticator, read its key from the page, confirm
 * with the current code).
 * @param {string} baseUrl @param {string} usersKey @param {string} username
 * @returns {Promise<TotpUser>}
 */
export async function enrolTotpUser(baseUrl, usersKey, username) {
  const { password, jar, account } = await openAccountPage(baseUrl, usersKey, username);
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
 * A browser without a session starting an authorization request (PKCE S256): authorize answers a
 * 303 to the login page, which is fetched. Throws on any other answer.
 * @param {string} baseUrl @param {string} clientId
 */
async function openLoginPage(baseUrl, clientId) {
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
  return { jar, login };
}

/**
 * One whole sign-in for an authorization request, as a browser without a session makes it: five
 * requests, the last answering 303 to the redirect URI with a code. Returns nothing; throws on any
 * other answer.
 * @param {string} baseUrl @param {string} clientId @param {TotpUser} user @param {number} step
 */
export async function signInWithTotp(baseUrl, clientId, user, step) {
  const { jar, login } = await openLoginPage(baseUrl, clientId);
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
 * `oncePerStep: false` (passkeys): anyone, any time, in turn.
 * @template {TotpUser} U
 * @param {{ users: U[], concurrency: number, seconds: number, pid: number | undefined,
 *   signIn: (user: U, step: number) => Promise<void>, oncePerStep?: boolean }} options
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
      const user = /** @type {U} */ (options.users[next]);
      next = (next + 1) % options.users.length;
      if (options.oncePerStep === false || user.lastStep < step) {
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
  record(run, id, label, result, idgate);
  if (result.detail.ranOut)
    run.notes.push(
      `${id}: every one of the ${count} people had signed in in the current 30-s step after ` +
        `${result.duration.toFixed(1)} s (the figures cover that time)`,
    );
}

/**
 * Records a driven run as a measurement of `id`, and logs it.
 * @param {import('./scenario.mjs').Runner} run @param {string} id @param {string} label
 * @param {Awaited<ReturnType<typeof driveSignIns>>} result @param {import('./scenario.mjs').Server} server
 */
function record(run, id, label, result, server) {
  if (!running(server.process)) throw new Error(`idgate exited during ${id}`);
  /** @type {import('./scenario.mjs').Measurement} */
  const measurement = { id, system: 'idgate', label, ...result };
  run.measurements.push(measurement);
  run.log(
    `  ${result.rps.toFixed(1)} sign-ins/s, p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, ` +
      `${result.errors} errors, ${result.cpu.serverMicrosPerRequest?.toFixed(0) ?? '—'} µs CPU/sign-in`,
  );
  if (result.errors > 0) run.notes.push(`${id}: ${result.errors} errors ${JSON.stringify(result.detail)}`);
}

// --- passkeys ----------------------------------------------------------------------------------

/** The few CBOR (RFC 8949) items an authenticator writes: maps, ints, text and bytes. @param {unknown} value @returns {Buffer} */
export function cbor(value) {
  const head = (/** @type {number} */ major, /** @type {number} */ n) =>
    n < 24
      ? Buffer.from([(major << 5) | n])
      : n < 256
        ? Buffer.from([(major << 5) | 24, n])
        : Buffer.from([(major << 5) | 25, n >> 8, n & 255]);
  if (typeof value === 'number') return value >= 0 ? head(0, value) : head(1, -1 - value);
  if (typeof value === 'string')
    return Buffer.concat([head(3, Buffer.byteLength(value)), Buffer.from(value)]);
  if (value instanceof Uint8Array) return Buffer.concat([head(2, value.length), value]);
  const entries = value instanceof Map ? [...value] : Object.entries(/** @type {object} */ (value));
  return Buffer.concat([head(5, entries.length), ...entries.flatMap(([k, v]) => [cbor(k), cbor(v)])]);
}

const sha256 = (/** @type {Buffer | string} */ bytes) => createHash('sha256').update(bytes).digest();

/**
 * A software passkey (ES256, attestation `none`, signature counter 0 as synced passkeys keep it),
 * written for the bench: the client data, authenticator data and signatures a browser and its
 * authenticator send.
 */
export class SoftPasskey {
  id = randomBytes(16);
  /** @type {string | undefined} the user handle the registration options gave */
  userHandle;
  /** @param {string} rpId @param {string} origin */
  constructor(rpId, origin) {
    this.rpId = rpId;
    this.origin = origin;
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    this.key = privateKey;
    const jwk = publicKey.export({ format: 'jwk' });
    this.cose = cbor(
      new Map(
        /** @type {[number, unknown][]} */ ([
          [1, 2],
          [3, -7],
          [-1, 1],
          [-2, Buffer.from(/** @type {string} */ (jwk.x), 'base64url')],
          [-3, Buffer.from(/** @type {string} */ (jwk.y), 'base64url')],
        ]),
      ),
    );
  }
  /** @param {string} type @param {any} options */
  #clientData(type, options) {
    return Buffer.from(
      JSON.stringify({ type, challenge: options.challenge, origin: this.origin, crossOrigin: false }),
    );
  }
  /** @param {number} flags @param {Buffer} [extra] */
  #authData(flags, extra = Buffer.alloc(0)) {
    return Buffer.concat([sha256(this.rpId), Buffer.from([flags, 0, 0, 0, 0]), extra]);
  }
  /** navigator.credentials.create() answered, as RegistrationResponseJSON. @param {any} options */
  register(options) {
    this.userHandle = options.user?.id;
    const attested = Buffer.concat([Buffer.alloc(16), Buffer.from([0, this.id.length]), this.id, this.cose]);
    const authData = this.#authData(0x01 | 0x04 | 0x40, attested);
    return JSON.stringify({
      id: this.id.toString('base64url'),
      rawId: this.id.toString('base64url'),
      type: 'public-key',
      response: {
        clientDataJSON: this.#clientData('webauthn.create', options).toString('base64url'),
        attestationObject: cbor({ fmt: 'none', attStmt: {}, authData }).toString('base64url'),
        transports: ['internal'],
      },
      clientExtensionResults: {},
    });
  }
  /** navigator.credentials.get() answered (user verified), as AuthenticationResponseJSON. @param {any} options */
  assert(options) {
    const authData = this.#authData(0x01 | 0x04);
    const clientData = this.#clientData('webauthn.get', options);
    const signature = sign('sha256', Buffer.concat([authData, sha256(clientData)]), this.key);
    return JSON.stringify({
      id: this.id.toString('base64url'),
      rawId: this.id.toString('base64url'),
      type: 'public-key',
      response: {
        clientDataJSON: clientData.toString('base64url'),
        authenticatorData: authData.toString('base64url'),
        signature: signature.toString('base64url'),
        ...(this.userHandle === undefined ? {} : { userHandle: this.userHandle }),
      },
      clientExtensionResults: {},
    });
  }
}

/** The WebAuthn options a page's passkey form carries, and its hidden fields. @param {string} html */
export function passkeyForm(html) {
  const start = html.indexOf('data-webauthn-options="');
  if (start < 0) return undefined;
  const form = html.slice(html.lastIndexOf('<form', start), html.indexOf('</form>', start));
  const raw = /data-webauthn-options="([^"]*)"/.exec(form)?.[1] ?? '';
  const options = JSON.parse(
    raw
      .replaceAll('&quot;', '"')
      .replaceAll('&#39;', "'")
      .replaceAll('&lt;', '<')
      .replaceAll('&gt;', '>')
      .replaceAll('&amp;', '&'),
  );
  return { options, ...hiddenFields(form) };
}

/**
 * One person with a passkey: created over the admin REST API, signed in with the password, the
 * passkey registered on the account page.
 * @param {string} baseUrl @param {string} usersKey @param {string} username @param {{ id: string, origin: string }} rp
 */
export async function registerPasskeyUser(baseUrl, usersKey, username, rp) {
  const { password, jar, account } = await openAccountPage(baseUrl, usersKey, username);
  const form = passkeyForm(account.text);
  if (account.status !== 200 || form === undefined || form.interaction === undefined)
    throw new Error(`account page without a passkey form: ${account.status}`);
  const passkey = new SoftPasskey(rp.id, rp.origin);
  const done = await send(jar, `${baseUrl}/oauth/account/passkeys`, {
    method: 'POST',
    headers: FORM,
    body: new URLSearchParams({
      interaction: form.interaction,
      csrf: form.csrf ?? '',
      name: 'bench-key',
      credential: passkey.register(form.options),
    }).toString(),
  });
  if (done.status !== 200)
    throw new Error(`registering a passkey: ${done.status} ${done.text.slice(0, 300)}`);
  return { username, password, secret: Buffer.alloc(0), lastStep: -1, passkey };
}

/**
 * A whole passkey sign-in for an authorization request: authorize, the login page (its passkey
 * form's single-use challenge), the assertion, answered by a 303 to the redirect URI with a code.
 * @param {string} baseUrl @param {string} clientId @param {SoftPasskey} passkey
 */
export async function signInWithPasskey(baseUrl, clientId, passkey) {
  const { jar, login } = await openLoginPage(baseUrl, clientId);
  const form = passkeyForm(login.text);
  if (login.status !== 200 || form === undefined || form.interaction === undefined)
    throw new Error(`login page without a passkey form: ${login.status}`);
  const done = await send(jar, `${baseUrl}/oauth/login/passkey`, {
    method: 'POST',
    headers: FORM,
    body: new URLSearchParams({
      interaction: form.interaction,
      csrf: form.csrf ?? '',
      credential: passkey.assert(form.options),
    }).toString(),
  });
  if (done.status !== 303 || done.location === null || !done.location.startsWith(REDIRECT_URI))
    throw new Error(`passkey: ${done.status}`);
  if (new URL(done.location).searchParams.get('code') === null) throw new Error('redirect without a code');
}

/** People with a passkey for `idgate.sign-in-passkey`: each signs in in turn, any number of times. */
const PASSKEY_USERS = 32;

/**
 * `idgate.sign-in-passkey`: whole sign-ins with a passkey alone (login page's discoverable
 * credential, user verified: `amr` `hwk user mfa`), on an idgate of its own whose issuer is
 * `http://localhost:<port>/oauth` (WebAuthn refuses IP-literal hosts, and the pages offer passkeys
 * only on https or localhost), seeded through its CLI on a SQLite database of its own. Requests
 * still go to 127.0.0.1; the software passkey claims the issuer's origin.
 * @param {import('./scenario.mjs').Runner} run
 * @param {{ serverBin: string, databaseUrl: string }} setup
 */
export async function passkeyScenario(run, setup) {
  const id = 'idgate.sign-in-passkey';
  if (!run.wanted(id)) return;
  const { options, log } = run;
  const env = idgateEnvironment({
    port: await freePort(),
    databaseUrl: setup.databaseUrl,
    alg: options.alg,
    issuerHost: 'localhost',
  });
  /** @param {string[]} args */
  const cli = async (args) =>
    JSON.parse(await runNode([setup.serverBin, ...args], { env, what: `idgate ${args.join(' ')}` }));
  await cli(['init', '--json']);
  const web = await cli([
    ...['clients', 'add', '--name', 'bench-web', '--trusted', '--redirect-uri', REDIRECT_URI],
    ...['--grant', 'authorization_code', 'refresh_token', '--scope', 'openid', 'groups', 'offline_access'],
    '--json',
  ]);
  const usersKey = (
    await cli(['api-keys', 'add', '--name', 'bench-users', '--scope', 'users:write', '--json'])
  ).key;
  const server = await startIdgate({
    serverBin: setup.serverBin,
    env,
    logFile: join(run.tmp, 'idgate-localhost.log'),
  });
  try {
    const issuer = new URL(/** @type {string} */ (env.IDGATE_ISSUER));
    const rp = { id: issuer.hostname, origin: issuer.origin };
    const started = Date.now();
    const users = await mapLimit(Array.from({ length: PASSKEY_USERS }), 4, (_, i) =>
      registerPasskeyUser(server.url, usersKey, `passkey-${i}`, rp),
    );
    log(
      `registered ${users.length} passkeys in ${((Date.now() - started) / 1000).toFixed(1)} s (issuer ${issuer.origin})`,
    );
    log(`${id}: whole sign-ins (authorize, login page, passkey assertion, redirect with a code)`);
    const drive = (/** @type {number} */ seconds) =>
      driveSignIns({
        users,
        concurrency: SIGN_IN_CONCURRENCY,
        seconds,
        pid: server.process.pid,
        oncePerStep: false,
        signIn: (user) => signInWithPasskey(server.url, web.clientId, user.passkey),
      });
    if (options.warmup > 0) await drive(options.warmup);
    record(run, id, 'passkey alone (ES256 assertion)', await drive(options.duration), server);
  } finally {
    await stop(server.process);
  }
}
