// The write paths: refresh-token rotation, authorization_code exchange, device-code polls.
// Every credential is minted before its scenario through the real flows (not measured).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { approveDevice, pkcePairs, signIn } from './browser.mjs';
import { DEVICE_GRANT, REDIRECT_URI } from './idgate.mjs';

const FORM = 'application/x-www-form-urlencoded';
const ISSUED = { status: 200, bodyIncludes: '"access_token"' };
const PENDING = { status: 400, bodyIncludes: '"authorization_pending"' };

/**
 * Maps with at most `limit` calls in flight.
 * @template T, R
 * @param {T[]} items @param {number} limit @param {(item: T, index: number) => Promise<R>} fn
 */
export async function mapLimit(items, limit, fn) {
  /** @type {R[]} */
  const results = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(/** @type {T} */ (items[index]), index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/**
 * @typedef {{ auth: { app: string, web: string }, webClientId: string, deviceClientId: string,
 *   user: { username: string, password: string }, passwordGrant: () => Promise<any> }} WriteFixtures
 */

/**
 * A pool of refresh tokens for each (target, phase): every one costs a password sign-in (argon2id),
 * four at a time. Each wrk run strands the tokens of the requests in flight when it stops, so a
 * run needs one per connection and some spare; warm-up and the measured run get pools of their own.
 * @param {import('./scenario.mjs').Runner} run @param {WriteFixtures} f @param {number} targets @param {string} name
 */
async function refreshPools(run, f, targets, name) {
  const perRun = Math.ceil(run.options.connections / targets) + 16;
  const phases = run.options.warmup > 0 ? ['warmup', 'run'] : ['run'];
  const grants = await mapLimit(Array.from({ length: perRun * targets * phases.length }), 4, () =>
    f.passwordGrant(),
  );
  /** @type {Record<string, string>} */
  const files = {};
  let next = 0;
  for (let target = 0; target < targets; target++) {
    for (const phase of phases) {
      const file = join(run.tmp, `${name}-${target}-${phase}.txt`);
      const tokens = grants.slice(next, next + perRun).map((grant) => grant.refresh_token);
      next += perRun;
      writeFileSync(file, `${tokens.join('\n')}\n`);
      files[`${target}:${phase}`] = file;
    }
  }
  return files;
}

/**
 * refresh_token rotation on `targets` (one idgate, or every replica at once).
 * @param {import('./scenario.mjs').Runner} run @param {WriteFixtures} f @param {string} id
 * @param {import('./scenario.mjs').Server[]} [targets]
 */
export async function refreshRotation(run, f, id, targets) {
  const count = targets?.length ?? 1;
  const files = await refreshPools(run, f, count, id.replace(/\W/g, '-'));
  return run.scenario(
    id,
    count > 1 ? 'idgate-replicas' : 'idgate',
    'token endpoint, refresh_token: each request sends the token the previous one got',
    (target, phase) => ({
      method: 'POST',
      path: '/oauth/token',
      headers: { authorization: f.auth.app, 'content-type': FORM },
      body: 'grant_type=refresh_token&refresh_token={1}',
      source: 'refresh',
      file: /** @type {string} */ (files[`${target}:${phase}`]),
      expect: ISSUED,
    }),
    targets === undefined ? {} : { targets },
  );
}

/**
 * The write paths on one idgate: refresh rotation, authorization_code exchange (codes from the
 * authorization endpoint with PKCE, as a signed-in browser gets them), device-code polls while
 * pending and the redemption of approved codes.
 * @param {import('./scenario.mjs').Runner} run @param {WriteFixtures} f @param {{ writePaths: boolean }} scope
 */
export async function writeScenarios(run, f, scope) {
  const { wanted, options, tmp, log } = run;
  const idgate = /** @type {import('./scenario.mjs').Server} */ (run.servers.idgate);
  if (wanted('idgate.refresh-rotation')) await refreshRotation(run, f, 'idgate.refresh-rotation');
  if (!scope.writePaths) return;
  const rotation = run.measurements.find((m) => m.id === 'idgate.refresh-rotation');
  // The pools are sized from the rotation's rate: an exchange or a redemption writes about as much,
  // and more often than not runs faster (a chain waits for its previous link).
  const grantRate = Math.max(200, rotation === undefined ? 800 : rotation.rps * 2);
  const needCodes = wanted('idgate.authorization-code');
  const needDevice = wanted('idgate.device-poll-pending') || wanted('idgate.device-redeem');
  if (!needCodes && !needDevice) return;
  const session = await signIn(idgate.url, '/oauth', f.user.username, f.user.password);

  if (needCodes) {
    // Codes live 60 s: minted right before the run, one authorization request each (PKCE S256).
    const amount = Math.min(
      options.maxTokens,
      20_000,
      Math.ceil(grantRate * 1.5 * options.duration * 1.3) + 64,
    );
    const pairs = join(tmp, 'pkce.txt');
    // Spare pairs: the requests in flight when a thread has collected its share are dropped.
    writeFileSync(pairs, pkcePairs(amount + 2 * options.connections));
    const codes = join(tmp, 'codes.txt');
    writeFileSync(codes, '');
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: f.webClientId,
      redirect_uri: REDIRECT_URI,
      scope: 'openid groups offline_access',
      code_challenge_method: 'S256',
    }).toString();
    await run.mint(
      'authorization codes',
      idgate,
      {
        method: 'GET',
        path: `/oauth/authorize?${query}&code_challenge={1}&state={2}`,
        headers: { cookie: session.header() },
        source: 'pool',
        file: pairs,
        expect: { status: 303 },
        collect: { file: '', location: 'code', tag: 'state' },
      },
      amount,
      codes,
    );
    await run.scenario(
      'idgate.authorization-code',
      'idgate',
      'token endpoint, authorization_code with PKCE: a code minted through /authorize on every request',
      {
        method: 'POST',
        path: '/oauth/token',
        headers: { authorization: f.auth.web, 'content-type': FORM },
        body: `grant_type=authorization_code&code={1}&code_verifier={2}&redirect_uri=${encodeURIComponent(REDIRECT_URI)}`,
        source: 'pool',
        file: codes,
        expect: ISSUED,
      },
      { warmup: 0 },
    );
  }
  if (!needDevice) return;

  /** @param {number} amount @param {string} file */
  const deviceCodes = (amount, file) => {
    writeFileSync(file, '');
    return run.mint(
      'device codes',
      idgate,
      {
        method: 'POST',
        path: '/oauth/device_authorization',
        headers: { 'content-type': FORM },
        body: `client_id=${encodeURIComponent(f.deviceClientId)}&scope=openid%20groups%20offline_access`,
        expect: { status: 200, bodyIncludes: '"device_code"' },
        collect: { file: '', field: 'device_code' },
      },
      amount,
      file,
    );
  };
  const poll = (/** @type {string} */ file, /** @type {'pool' | 'cycle'} */ source, expect = PENDING) => ({
    method: 'POST',
    path: '/oauth/token',
    headers: { 'content-type': FORM },
    body: `grant_type=${encodeURIComponent(DEVICE_GRANT)}&device_code={1}&client_id=${encodeURIComponent(f.deviceClientId)}`,
    source,
    file,
    expect,
  });
  if (wanted('idgate.device-poll-pending')) {
    // Each code is polled at most once a second (the interval idgate runs with here) with margin:
    // a pool of twice the rate for each phase, the rate bounded by the warm TokenReview's.
    const warm = run.measurements.find((m) => m.id === 'idgate.tokenreview-warm')?.rps ?? 3000;
    const amount = Math.min(options.maxTokens, Math.ceil(Math.min(warm, 4000) * 2.5));
    const warmupFile = join(tmp, 'device-pending-warmup.txt');
    const runFile = join(tmp, 'device-pending.txt');
    if (options.warmup > 0) await deviceCodes(amount, warmupFile);
    await deviceCodes(amount, runFile);
    const result = await run.scenario(
      'idgate.device-poll-pending',
      'idgate',
      'token endpoint, device_code grant, pending (authorization_pending), each code polled at most once a second',
      (_target, phase) => poll(phase === 'warmup' ? warmupFile : runFile, 'cycle'),
    );
    if (result.rps > amount / 1.2)
      run.notes.push(
        `idgate.device-poll-pending: ${amount} codes polled at ${result.rps.toFixed(0)}/s: some more often than once a second`,
      );
  }
  if (wanted('idgate.device-redeem')) {
    // Approved on the verification page as the signed-in person (three requests each): at most
    // 3,000, or the setup would outlast the run; a run that uses them up stops early and says so.
    const amount = Math.min(options.maxTokens, 3000, Math.ceil(grantRate * options.duration * 1.2) + 64);
    const file = join(tmp, 'device-approved.txt');
    const started = Date.now();
    /** @type {{ device_code: string, user_code: string }[]} */
    const startedCodes = await mapLimit(Array.from({ length: amount }), 8, async () => {
      const response = await fetch(`${idgate.url}/oauth/device_authorization`, {
        method: 'POST',
        headers: { 'content-type': FORM },
        body: new URLSearchParams({ client_id: f.deviceClientId, scope: 'openid groups offline_access' }),
      });
      if (response.status !== 200) throw new Error(`device authorization: ${response.status}`);
      const answer = /** @type {any} */ (await response.json());
      return answer;
    });
    await mapLimit(startedCodes, 8, (code) => approveDevice(session, idgate.url, '/oauth', code.user_code));
    writeFileSync(file, `${startedCodes.map((code) => code.device_code).join('\n')}\n`);
    log(`approved ${amount} device codes in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    await run.scenario(
      'idgate.device-redeem',
      'idgate',
      'token endpoint, device_code grant, an approved code redeemed on every request',
      poll(file, 'pool', ISSUED),
      { warmup: 0 },
    );
  }
}
