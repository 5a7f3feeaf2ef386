import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { ExecCredential } from '@idgate/schema';
import { createIdgateClient } from '@idgate/sdk';
import type { ExchangeArgs } from './args.js';
import { type AccessEntry, TokenCache } from './cache.js';
import { PluginError, usageError } from './errors.js';
import { execCredential, readExecInfo } from './exec-credential.js';
import { issuerError, MIN_REMAINING_MS, type PluginContext } from './get-token.js';

/** GitHub Actions' variables of the job's OIDC token request (set with `permissions: id-token: write`). */
export const GITHUB_URL_VARIABLE = 'ACTIONS_ID_TOKEN_REQUEST_URL';
export const GITHUB_TOKEN_VARIABLE = 'ACTIONS_ID_TOKEN_REQUEST_TOKEN';

/** How long the request to GitHub's token URL may take. */
const GITHUB_TIMEOUT_MS = 10_000;

/** Where the job's or workload's token comes from. */
export type SubjectSource =
  | { kind: 'github'; requestUrl: string; requestToken: string; audience: string }
  | { kind: 'env'; variable: string }
  | { kind: 'file'; path: string };

/**
 * Which source `args` and the environment name: `--token-file`, `--token-env`, else GitHub
 * Actions when both of its variables are set.
 * @throws {PluginError} (exit code 2) when there is none, or GitHub's variables are half set.
 */
export function subjectSource(args: ExchangeArgs, env: NodeJS.ProcessEnv): SubjectSource {
  if (args.tokenFile !== undefined) return { kind: 'file', path: args.tokenFile };
  if (args.tokenEnv !== undefined) return { kind: 'env', variable: args.tokenEnv };
  const requestUrl = env[GITHUB_URL_VARIABLE] ?? '';
  const requestToken = env[GITHUB_TOKEN_VARIABLE] ?? '';
  if (requestUrl !== '' && requestToken !== '')
    return { kind: 'github', requestUrl, requestToken, audience: args.subjectAudience };
  if (requestUrl !== '' || requestToken !== '') {
    const missing = requestUrl === '' ? GITHUB_URL_VARIABLE : GITHUB_TOKEN_VARIABLE;
    throw usageError(
      `--exchange in GitHub Actions needs ${missing} too: give the job "permissions: id-token: write"`,
    );
  }
  throw usageError(
    `--exchange found no token to exchange: in GitHub Actions give the job "permissions: id-token: write" (${GITHUB_URL_VARIABLE} and ${GITHUB_TOKEN_VARIABLE}); elsewhere pass --token-env VARIABLE (a GitLab CI id_token) or --token-file FILE (a projected service-account token)`,
  );
}

/** What the source is, for a message: never the token. */
function describe(source: SubjectSource): string {
  switch (source.kind) {
    case 'github':
      return "GitHub Actions' token";
    case 'env':
      return `the token in ${source.variable}`;
    case 'file':
      return `the token in ${source.path}`;
  }
}

/** The claims of a JWT, unverified (idgate verifies it): to name the cache entry. */
export function unverifiedClaims(token: string, what: string): Record<string, unknown> {
  const parts = token.split('.');
  let claims: unknown;
  if (parts.length === 3 && parts.every((part) => /^[A-Za-z0-9_-]+$/.test(part))) {
    try {
      claims = JSON.parse(Buffer.from(parts[1] as string, 'base64url').toString('utf8'));
    } catch {
      claims = undefined;
    }
  }
  if (typeof claims !== 'object' || claims === null || Array.isArray(claims))
    throw new PluginError(`${what} is not a JWT`);
  return claims as Record<string, unknown>;
}

/** Reads the subject token from its source. */
export async function readSubjectToken(source: SubjectSource, context: PluginContext): Promise<string> {
  let token: string;
  switch (source.kind) {
    case 'env': {
      token = (context.env[source.variable] ?? '').trim();
      if (token === '')
        throw new PluginError(
          `the variable ${source.variable} is not set or empty (GitLab CI: declare it under the job's id_tokens)`,
        );
      break;
    }
    case 'file': {
      try {
        token = (await readFile(source.path, 'utf8')).trim();
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
        throw new PluginError(`cannot read the token file ${source.path}: ${code}`, { cause: error });
      }
      if (token === '') throw new PluginError(`the token file ${source.path} is empty`);
      break;
    }
    case 'github':
      token = await githubToken(source, context);
      break;
  }
  return token;
}

/** GET `${ACTIONS_ID_TOKEN_REQUEST_URL}&audience=…` with the request token: `{ "value": "<jwt>" }`. */
async function githubToken(
  source: Extract<SubjectSource, { kind: 'github' }>,
  context: PluginContext,
): Promise<string> {
  let url: URL;
  try {
    url = new URL(source.requestUrl);
  } catch {
    throw new PluginError(`${GITHUB_URL_VARIABLE} is not a URL`);
  }
  url.searchParams.set('audience', source.audience);
  // the URL is GitHub's and carries no secret; its query is left out all the same
  const where = `${url.origin}${url.pathname}`;
  let response: Response;
  try {
    response = await (context.fetch ?? fetch)(url, {
      headers: { authorization: `Bearer ${source.requestToken}`, accept: 'application/json' },
      signal: AbortSignal.timeout(GITHUB_TIMEOUT_MS),
    });
  } catch (error) {
    const reason = error instanceof Error && error.name === 'TimeoutError' ? 'timed out' : 'network error';
    throw new PluginError(`cannot reach GitHub Actions' token request URL ${where}: ${reason}`, {
      cause: error,
    });
  }
  if (!response.ok) {
    await response.body?.cancel();
    throw new PluginError(
      `GitHub Actions' token request (${where}, audience ${source.audience}) answered ${response.status}`,
    );
  }
  let value: unknown;
  try {
    value = ((await response.json()) as { value?: unknown } | null)?.value;
  } catch {
    value = undefined;
  }
  if (typeof value !== 'string' || value === '')
    throw new PluginError(`GitHub Actions' token request (${where}) answered no "value"`);
  return value;
}

/**
 * The cache entry's client part: what identifies the job or workload, never a token. A GitHub job
 * by its token request URL (one per job) and the audience asked; a token by its claims but those
 * that change when it is reissued (`iat`, `nbf`, `exp`, `jti`): a rotated projected token finds
 * the access token its predecessor got; another job's or pod's token does not.
 */
function cacheClient(source: SubjectSource, claims: Record<string, unknown> | undefined): string {
  const hash = createHash('sha256');
  if (source.kind === 'github') {
    hash.update(JSON.stringify(['github', source.requestUrl, source.audience]));
  } else {
    const stable = Object.entries(claims ?? {})
      .filter(([name]) => !['iat', 'nbf', 'exp', 'jti'].includes(name))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    hash.update(JSON.stringify(['subject', stable]));
  }
  return `exchange:${hash.digest('hex').slice(0, 32)}`;
}

/** idgate's server root, from its issuer (`{base URL}/oauth`), for the SDK. */
function serverRoot(issuer: string): string {
  return issuer.replace(/\/oauth$/, '');
}

/**
 * `get-token --exchange`: the CI job's or workload's token exchanged at idgate (RFC 8693) for an
 * access token for `args.audience`, answered as an ExecCredential and cached until shortly before
 * it expires (a subject token's `jti` is accepted once: the next kubectl reuses the answer).
 */
export async function exchangeToken(args: ExchangeArgs, context: PluginContext): Promise<ExecCredential> {
  const info = readExecInfo(context.env.KUBERNETES_EXEC_INFO);
  const source = subjectSource(args, context.env);
  const cache = await TokenCache.open(args.cacheDir);
  const answer = (entry: AccessEntry) => execCredential(info.apiVersion, entry.accessToken, entry.expiresAt);
  const fresh = (entry: AccessEntry | undefined): entry is AccessEntry =>
    entry !== undefined && entry.expiresAt - context.now() > MIN_REMAINING_MS;

  // a file or variable is read first (it names the entry); GitHub's token only when one is needed
  let subject: string | undefined;
  let claims: Record<string, unknown> | undefined;
  if (source.kind !== 'github') {
    subject = await readSubjectToken(source, context);
    claims = unverifiedClaims(subject, describe(source));
  }
  const clientId = cacheClient(source, claims);
  const cached = await cache.readAccess(args.issuer, clientId, args.audience);
  if (fresh(cached)) return answer(cached);

  return cache.locked(args.issuer, clientId, async () => {
    // another kubectl may have exchanged while this one waited for the lock
    const again = await cache.readAccess(args.issuer, clientId, args.audience);
    if (fresh(again)) return answer(again);
    if (subject === undefined) {
      subject = await readSubjectToken(source, context);
      claims = unverifiedClaims(subject, describe(source));
    }
    const client = createIdgateClient({ baseUrl: serverRoot(args.issuer), fetch: context.fetch });
    let tokens: Awaited<ReturnType<typeof client.tokenExchange>>;
    try {
      tokens = await client.tokenExchange({ subjectToken: subject, audience: args.audience });
    } catch (error) {
      throw issuerError(args.issuer, error);
    }
    const entry: AccessEntry = {
      issuer: args.issuer,
      clientId,
      audience: args.audience,
      accessToken: tokens.access_token,
      expiresAt: context.now() + tokens.expires_in * 1000,
    };
    await cache.writeAccess(entry);
    return answer(entry);
  });
}
