// idgate for the benchmark: seeded through its own CLI, served as `pnpm start` serves it.
import { generateKeyPairSync, randomBytes, randomUUID, sign } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IDGATE_MALLOC_ENV, IDGATE_NODE_FLAGS } from './cli.mjs';
import { freePort, runNode, spawnNode, waitUntilReady } from './processes.mjs';

export const REDIRECT_URI = 'http://127.0.0.1:9/callback';
export const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

export const basic = (/** @type {string} */ id, /** @type {string} */ secret) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

/**
 * The environment of every idgate process of the run (CLI and servers): the issuer is the first
 * replica's, so tokens from one replica are valid at the other.
 * `issuerHost` `localhost` for passkeys (WebAuthn refuses IP-literal hosts; the server still listens
 * on 127.0.0.1).
 * @param {{ port: number, databaseUrl: string, alg: string, issuerHost?: string }} options
 */
export function idgateEnvironment(options) {
  const issuer = `http://${options.issuerHost ?? '127.0.0.1'}:${options.port}/oauth`;
  return {
    ...process.env,
    ...IDGATE_MALLOC_ENV,
    NODE_ENV: 'production',
    IDGATE_CONFIG: '',
    IDGATE_HOST: '127.0.0.1',
    IDGATE_PORT: String(options.port),
    IDGATE_ISSUER: issuer,
    IDGATE_DATABASE_URL: options.databaseUrl,
    IDGATE_SECRET: `bench-${randomBytes(24).toString('base64url')}`,
    IDGATE_SIGNING_ALGORITHM: options.alg,
    IDGATE_LOG_LEVEL: 'warn',
    // A device polling sooner than this gets slow_down: one second keeps the pool of pending
    // device codes the poll scenario needs small (each code is polled at most once a second).
    IDGATE_DEVICE_POLL_INTERVAL: '1',
  };
}

/** The soak person's groups: as many as a platform engineer's, each named as teams are. */
const SOAK_GROUPS = Array.from({ length: 30 }, (_, i) => `platform-team-${String(i + 1).padStart(2, '0')}`);

/**
 * Seeds idgate through its CLI: clients for each grant, an API key for TokenReview, a user.
 * @param {string} serverBin @param {NodeJS.ProcessEnv} env
 */
export async function seed(serverBin, env) {
  /** @param {string[]} args @param {string} [input] */
  const cli = async (args, input) =>
    JSON.parse(await runNode([serverBin, ...args], { env, input, what: `idgate ${args.join(' ')}` }));
  await cli(['init', '--json']);
  const userScopes = ['--scope', 'openid', 'groups', 'offline_access'];
  const app = await cli([
    ...['clients', 'add', '--name', 'bench-app', '--trusted', '--grant', 'password', 'refresh_token'],
    ...userScopes,
    '--json',
  ]);
  const service = await cli([
    'clients',
    'add',
    '--name',
    'bench-service',
    '--grant',
    'client_credentials',
    '--json',
  ]);
  const expiring = await cli([
    ...['clients', 'add', '--name', 'bench-expiring', '--grant', 'client_credentials'],
    ...['--access-token-ttl', '1', '--json'],
  ]);
  const web = await cli([
    ...['clients', 'add', '--name', 'bench-web', '--trusted', '--redirect-uri', REDIRECT_URI],
    ...['--grant', 'authorization_code', 'refresh_token', ...userScopes, '--json'],
  ]);
  const device = await cli([
    ...['clients', 'add', '--name', 'bench-device', '--public', '--grant', DEVICE_GRANT, 'refresh_token'],
    ...userScopes,
    '--json',
  ]);
  const apiKey = (await cli(['api-keys', 'add', '--name', 'bench', '--scope', 'tokenreview', '--json'])).key;
  // The second-factor sign-ins' people are created over REST (one CLI process each would outlast the run).
  const usersKey = (
    await cli(['api-keys', 'add', '--name', 'bench-users', '--scope', 'users:write', '--json'])
  ).key;
  // The soak's cluster: its tokens carry the claims Kubernetes maps (username, prefixed groups),
  // reviewed with its own bound API key, for a person in 30 groups.
  const cluster = await cli(['clusters', 'add', 'bench-soak', '--json']);
  // The token exchange's trust: a CI issuer whose keys are given inline (the run signs its jobs'
  // tokens itself, see `subjectTokens`), for the soak's cluster. It publishes an RSA key, as GitHub
  // and GitLab do, and a P-256 key, as some clusters' service-account issuers do.
  const ci = {
    RS256: generateKeyPairSync('rsa', { modulusLength: 2048 }),
    ES256: generateKeyPairSync('ec', { namedCurve: 'P-256' }),
  };
  const jwksDir = mkdtempSync(join(tmpdir(), 'idgate-bench-jwks-'));
  const jwksFile = join(jwksDir, 'jwks.json');
  const jwk = (/** @type {'RS256' | 'ES256'} */ alg) => ({
    ...ci[alg].publicKey.export({ format: 'jwk' }),
    kid: CI_KEY_IDS[alg],
    alg,
    use: 'sig',
  });
  writeFileSync(jwksFile, JSON.stringify({ keys: [jwk('RS256'), jwk('ES256')] }));
  await cli([
    ...['trusts', 'add', 'bench-ci', '--issuer', CI_ISSUER, '--audience', 'idgate', '--jwks', jwksFile],
    ...['--when', 'claims.repository == "acme/infra" && claims.ref == "refs/heads/main"'],
    ...['--username', 'ci:{repository}', '--groups', 'ci-deployers', '--clusters', 'bench-soak'],
    ...['--ttl', '10m', '--json'],
  ]);
  rmSync(jwksDir, { recursive: true, force: true });
  const kube = await cli([
    ...['clients', 'add', '--name', 'bench-kube', '--trusted', '--grant', 'password', 'refresh_token'],
    ...['--audience', cluster.cluster.audience, ...userScopes, '--json'],
  ]);
  const soakPassword = `secret-${randomBytes(18).toString('base64url')}`;
  await cli(
    [
      ...['users', 'add', 'soak', ...SOAK_GROUPS.flatMap((group) => ['--group', group])],
      ...['--password-stdin', '--json'],
    ],
    soakPassword,
  );
  const password = `secret-${randomBytes(18).toString('base64url')}`;
  await cli(
    [
      ...['users', 'add', 'bench', '--group', 'dev', '--group', 'ops', '--email', 'bench@example.com'],
      ...['--password-stdin', '--json'],
    ],
    password,
  );
  return {
    apiKey,
    usersKey,
    user: { username: 'bench', password },
    auth: {
      app: basic(app.clientId, app.clientSecret),
      service: basic(service.clientId, service.clientSecret),
      expiring: basic(expiring.clientId, expiring.clientSecret),
      web: basic(web.clientId, web.clientSecret),
    },
    ciKeys: { RS256: ci.RS256.privateKey, ES256: ci.ES256.privateKey },
    webClientId: web.clientId,
    deviceClientId: device.clientId,
    soak: {
      apiKey: cluster.apiKey,
      auth: basic(kube.clientId, kube.clientSecret),
      user: { username: 'soak', password: soakPassword },
    },
  };
}

/** The issuer of the bench's CI job tokens (never fetched: the trust holds its keys). */
export const CI_ISSUER = 'https://ci.bench.invalid';
const CI_KEY_IDS = { RS256: 'ci-rsa-1', ES256: 'ci-ec-1' };

/**
 * `count` job tokens shaped as GitHub Actions issues them (the header's `kid` and `x5t`, and the
 * claims of a push to main: 30 of them, about 1.1 KB), each with its own `jti` and `run_id`, valid an
 * hour, one a line in `file`: the subject tokens of the token exchange scenarios, each accepted once.
 * GitHub signs with RS256; `alg` ES256 signs with the trust's P-256 key instead.
 * @param {{ RS256: import('node:crypto').KeyObject, ES256: import('node:crypto').KeyObject }} keys
 * @param {number} count @param {string} file @param {'RS256' | 'ES256'} [alg]
 */
export function subjectTokens(keys, count, file, alg = 'RS256') {
  const key = keys[alg];
  const header = Buffer.from(
    JSON.stringify({ alg, kid: CI_KEY_IDS[alg], typ: 'JWT', x5t: 'ykNaY4qM_ta4k2TgZOCEYLkcYlA' }),
  ).toString('base64url');
  const iat = Math.floor(Date.now() / 1000);
  const sha = '0f661a4a011d77cb21fa4dc7013d9b6f928666ed';
  const lines = [];
  for (let i = 0; i < count; i++) {
    const run = String(14144996512 + i);
    const claims = {
      actor: 'octocat',
      actor_id: '583231',
      aud: 'idgate',
      base_ref: '',
      event_name: 'push',
      exp: iat + 3600,
      head_ref: '',
      iat,
      iss: CI_ISSUER,
      job_workflow_ref: 'acme/infra/.github/workflows/deploy.yml@refs/heads/main',
      job_workflow_sha: sha,
      jti: randomUUID(),
      nbf: iat - 300,
      ref: 'refs/heads/main',
      ref_protected: 'true',
      ref_type: 'branch',
      repository: 'acme/infra',
      repository_id: '957014466',
      repository_owner: 'acme',
      repository_owner_id: '43356',
      repository_visibility: 'private',
      run_attempt: '1',
      run_id: run,
      run_number: String(i + 1),
      runner_environment: 'github-hosted',
      sha,
      sub: 'repo:acme/infra:ref:refs/heads/main',
      workflow: 'deploy',
      workflow_ref: 'acme/infra/.github/workflows/deploy.yml@refs/heads/main',
      workflow_sha: sha,
    };
    const input = `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
    const signature = sign(
      'sha256',
      Buffer.from(input),
      alg === 'ES256' ? { key, dsaEncoding: 'ieee-p1363' } : key,
    );
    lines.push(`${input}.${signature.toString('base64url')}`);
  }
  writeFileSync(file, `${lines.join('\n')}\n`);
}

/**
 * Starts `idgate serve` as `pnpm start` does (its Node flags and malloc setting) on `port`.
 * @param {{ serverBin: string, env: NodeJS.ProcessEnv, port?: number, nodeFlags?: string[],
 *   cpuProfDir?: string, preload?: string[], logFile: string, extraEnv?: Record<string, string> }} options
 */
export async function startIdgate(options) {
  const port = options.port ?? Number(options.env.IDGATE_PORT);
  const child = spawnNode(
    [
      ...(options.nodeFlags ?? IDGATE_NODE_FLAGS),
      ...(options.cpuProfDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${options.cpuProfDir}`]),
      ...(options.preload ?? []).flatMap((file) => ['--import', file]),
      options.serverBin,
      'serve',
    ],
    {
      env: { ...options.env, ...options.extraEnv, IDGATE_PORT: String(port) },
      logFile: options.logFile,
    },
  );
  const url = `http://127.0.0.1:${port}`;
  await waitUntilReady(`${url}/readyz`, child, `idgate on port ${port}`, 60_000);
  return { url, process: child };
}

/** A second free port for a replica. */
export const replicaPort = () => freePort();

/** @param {string} dir @param {number} index */
export const idgateLog = (dir, index) => join(dir, index === 0 ? 'idgate.log' : `idgate-${index + 1}.log`);
