import { createHash, randomBytes } from 'node:crypto';
import { chmod, mkdir, open, readdir, readFile, rename, unlink } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { PluginError } from './errors.js';
import { type LockOptions, withLock } from './lock.js';

/**
 * The refresh token of one sign-in: one per issuer and client, shared by every audience (cluster)
 * it was signed in for, because a refresh for one cluster rotates it for all of them.
 */
export interface GrantEntry {
  issuer: string;
  clientId: string;
  refreshToken: string;
  /**
   * The audiences the sign-in asked for (RFC 8707 `resource`): the clusters its refreshes may get
   * tokens for. Absent in a cache written before the plugin recorded them.
   */
  audiences?: string[];
}

/**
 * The clusters (audiences) of one issuer and client the plugin was set up or run for: what a
 * sign-in asks for, so that one sign-in serves them all. Kept apart from the sign-in: signing
 * out does not forget them.
 */
export interface ClustersEntry {
  issuer: string;
  clientId: string;
  audiences: string[];
  /**
   * The `acr` a token for an audience must have, by audience: learnt when idgate refused a
   * refresh for it for want of a second factor. A cached token without it is not used.
   */
  requiredAcr?: Record<string, string>;
}

/** An access token for one audience, with its expiry in milliseconds since the epoch. */
export interface AccessEntry {
  issuer: string;
  clientId: string;
  audience: string;
  accessToken: string;
  expiresAt: number;
  /** The token's `acr` claim (absent in a cache written before the plugin recorded it). */
  acr?: string;
}

/** `~/.kube/cache/idgate`, where kubectl keeps its other caches. */
export function defaultCacheDir(): string {
  return join(homedir(), '.kube', 'cache', 'idgate');
}

const key = (...parts: string[]) =>
  createHash('sha256').update(JSON.stringify(parts)).digest('hex').slice(0, 32);
const GRANT_SUFFIX = '.refresh.json';
const ACCESS_SUFFIX = '.token.json';
const CLUSTERS_SUFFIX = '.clusters.json';

/**
 * The token cache: files of mode 0600 in a folder of mode 0700, each written atomically (a temporary
 * file renamed over it), so a reader sees the old or the new content, never half of it. A lock per
 * issuer and client serializes refreshes across processes.
 */
export class TokenCache {
  readonly dir: string;

  private constructor(dir: string) {
    this.dir = dir;
  }

  /** Opens (creating it with mode 0700 if needed) the cache folder `dir`. */
  static async open(dir: string = defaultCacheDir()): Promise<TokenCache> {
    try {
      await mkdir(dir, { recursive: true, mode: 0o700 });
      await chmod(dir, 0o700);
    } catch (error) {
      throw new PluginError(`cannot use the token cache folder ${dir}: ${errorCode(error)}`, {
        cause: error,
      });
    }
    return new TokenCache(dir);
  }

  grantPath(issuer: string, clientId: string): string {
    return join(this.dir, `${key(issuer, clientId)}${GRANT_SUFFIX}`);
  }

  accessPath(issuer: string, clientId: string, audience: string): string {
    return join(this.dir, `${key(issuer, clientId)}-${key(audience)}${ACCESS_SUFFIX}`);
  }

  /** Runs `task` holding the lock of the sign-in of `clientId` at `issuer`. */
  locked<T>(issuer: string, clientId: string, task: () => Promise<T>, options?: LockOptions): Promise<T> {
    return withLock(join(this.dir, `${key(issuer, clientId)}.lock`), task, options);
  }

  async readGrant(issuer: string, clientId: string): Promise<GrantEntry | undefined> {
    const path = this.grantPath(issuer, clientId);
    const entry = await readEntry(path);
    if (entry === undefined) return undefined;
    if (!isGrant(entry) || entry.issuer !== issuer || entry.clientId !== clientId) throw corrupt(path);
    return entry;
  }

  async readAccess(issuer: string, clientId: string, audience: string): Promise<AccessEntry | undefined> {
    const path = this.accessPath(issuer, clientId, audience);
    const entry = await readEntry(path);
    if (entry === undefined) return undefined;
    if (
      !isAccess(entry) ||
      entry.issuer !== issuer ||
      entry.clientId !== clientId ||
      entry.audience !== audience
    ) {
      throw corrupt(path);
    }
    return entry;
  }

  /** The audiences of `clientId` at `issuer` the plugin knows of (none when it knows none). */
  async readClusters(issuer: string, clientId: string): Promise<string[]> {
    return (await this.#readClustersEntry(issuer, clientId))?.audiences ?? [];
  }

  /** The `acr` each audience of `clientId` at `issuer` is known to require (see {@link ClustersEntry}). */
  async readRequiredAcr(issuer: string, clientId: string): Promise<Record<string, string>> {
    return (await this.#readClustersEntry(issuer, clientId))?.requiredAcr ?? {};
  }

  /** Remembers that tokens for `audience` need `acr`. Call it holding the sign-in's lock. */
  async requireAcr(issuer: string, clientId: string, audience: string, acr: string): Promise<void> {
    const entry = (await this.#readClustersEntry(issuer, clientId)) ?? { issuer, clientId, audiences: [] };
    if (entry.requiredAcr?.[audience] === acr) return;
    await writeAtomically(this.clustersPath(issuer, clientId), {
      ...entry,
      audiences: entry.audiences.includes(audience) ? entry.audiences : [...entry.audiences, audience],
      requiredAcr: { ...entry.requiredAcr, [audience]: acr },
    });
  }

  async #readClustersEntry(issuer: string, clientId: string): Promise<ClustersEntry | undefined> {
    const path = this.clustersPath(issuer, clientId);
    const entry = await readEntry(path);
    if (entry === undefined) return undefined;
    if (!isClusters(entry) || entry.issuer !== issuer || entry.clientId !== clientId) throw corrupt(path);
    return entry;
  }

  /**
   * Adds `audiences` to those the plugin knows of for `clientId` at `issuer` (kept in the order
   * first seen); rewrites the file only when something is new. Call it holding the sign-in's lock.
   * @returns every audience known, the new ones included.
   */
  async rememberClusters(issuer: string, clientId: string, audiences: readonly string[]): Promise<string[]> {
    const known = await this.readClusters(issuer, clientId);
    const all = [...new Set([...known, ...audiences])];
    if (all.length !== known.length) await this.writeClusters({ issuer, clientId, audiences: all });
    return all;
  }

  /**
   * Replaces the audiences the plugin knows of for the entry's issuer and client; the `acr` they
   * require is kept unless the entry gives it.
   */
  async writeClusters(entry: ClustersEntry): Promise<void> {
    const requiredAcr =
      entry.requiredAcr ?? (await this.#readClustersEntry(entry.issuer, entry.clientId))?.requiredAcr;
    await writeAtomically(
      this.clustersPath(entry.issuer, entry.clientId),
      requiredAcr === undefined ? entry : { ...entry, requiredAcr },
    );
  }

  clustersPath(issuer: string, clientId: string): string {
    return join(this.dir, `${key(issuer, clientId)}${CLUSTERS_SUFFIX}`);
  }

  writeGrant(entry: GrantEntry): Promise<void> {
    return writeAtomically(this.grantPath(entry.issuer, entry.clientId), entry);
  }

  writeAccess(entry: AccessEntry): Promise<void> {
    return writeAtomically(this.accessPath(entry.issuer, entry.clientId, entry.audience), entry);
  }

  /** Removes the refresh token and every access token of the sign-in of `clientId` at `issuer`. */
  async clearSignIn(issuer: string, clientId: string): Promise<void> {
    const prefix = key(issuer, clientId);
    for (const name of await this.#names()) {
      if (
        name === `${prefix}${GRANT_SUFFIX}` ||
        (name.startsWith(`${prefix}-`) && name.endsWith(ACCESS_SUFFIX))
      ) {
        await unlink(join(this.dir, name)).catch((error: unknown) => {
          if (errorCode(error) !== 'ENOENT') throw cannotWrite(join(this.dir, name), error);
        });
      }
    }
  }

  async removeAccess(issuer: string, clientId: string, audience: string): Promise<void> {
    await unlink(this.accessPath(issuer, clientId, audience)).catch(() => undefined);
  }

  /**
   * Removes every file of the cache that holds no valid entry (not JSON, not an entry of its kind,
   * or not the entry its name is for): what `get-token` refuses to use, and `logout` clears.
   * @returns the paths removed.
   */
  async removeUnreadable(): Promise<string[]> {
    const removed: string[] = [];
    for (const name of await this.#names()) {
      const kind = [GRANT_SUFFIX, ACCESS_SUFFIX, CLUSTERS_SUFFIX].find((suffix) => name.endsWith(suffix));
      if (kind === undefined) continue;
      const path = join(this.dir, name);
      let entry: Record<string, unknown> | undefined;
      try {
        entry = await readEntry(path);
      } catch (error) {
        if (!(error instanceof CorruptCacheFile)) throw error;
      }
      if (entry !== undefined && name === expectedName(kind, entry)) continue;
      await unlink(path).catch((error: unknown) => {
        if (errorCode(error) !== 'ENOENT') throw cannotWrite(path, error);
      });
      removed.push(path);
    }
    return removed;
  }

  /** Every sign-in in the cache, with the audiences it holds access tokens for. */
  async signIns(): Promise<
    Array<{ issuer: string; clientId: string; grant: GrantEntry | undefined; audiences: string[] }>
  > {
    const found = new Map<
      string,
      { issuer: string; clientId: string; grant: GrantEntry | undefined; audiences: string[] }
    >();
    for (const name of await this.#names()) {
      if (!name.endsWith(GRANT_SUFFIX) && !name.endsWith(ACCESS_SUFFIX)) continue;
      const path = join(this.dir, name);
      const entry = await readEntry(path);
      if (entry === undefined) continue;
      if (!isGrant(entry) && !isAccess(entry)) throw corrupt(path);
      const id = key(entry.issuer, entry.clientId);
      const signIn = found.get(id) ?? {
        issuer: entry.issuer,
        clientId: entry.clientId,
        grant: undefined,
        audiences: [],
      };
      if (isAccess(entry)) signIn.audiences.push(entry.audience);
      else signIn.grant = entry;
      found.set(id, signIn);
    }
    return [...found.values()];
  }

  async #names(): Promise<string[]> {
    try {
      return await readdir(this.dir);
    } catch (error) {
      throw new PluginError(`cannot read the token cache folder ${this.dir}: ${errorCode(error)}`, {
        cause: error,
      });
    }
  }
}

function errorCode(error: unknown): string {
  return (
    (error as NodeJS.ErrnoException | undefined)?.code ??
    (error instanceof Error ? error.message : String(error))
  );
}

/** A cache file whose content is not the entry it should hold (`kubectl-idgate logout` removes it). */
export class CorruptCacheFile extends PluginError {
  constructor(readonly path: string) {
    super(`the token cache file ${path} is not valid: remove it, or run kubectl-idgate logout`);
    this.name = 'CorruptCacheFile';
  }
}

function corrupt(path: string): PluginError {
  return new CorruptCacheFile(path);
}

/** The name of the file that should hold `entry`, of the kind `suffix` names; undefined when it is no such entry. */
function expectedName(suffix: string, entry: Record<string, unknown>): string | undefined {
  if (suffix === GRANT_SUFFIX && isGrant(entry)) return `${key(entry.issuer, entry.clientId)}${GRANT_SUFFIX}`;
  if (suffix === CLUSTERS_SUFFIX && isClusters(entry))
    return `${key(entry.issuer, entry.clientId)}${CLUSTERS_SUFFIX}`;
  if (suffix === ACCESS_SUFFIX && isAccess(entry))
    return `${key(entry.issuer, entry.clientId)}-${key(entry.audience)}${ACCESS_SUFFIX}`;
  return undefined;
}

function cannotWrite(path: string, error: unknown): PluginError {
  return new PluginError(`cannot write the token cache file ${path}: ${errorCode(error)}`, { cause: error });
}

async function readEntry(path: string): Promise<Record<string, unknown> | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return undefined;
    throw new PluginError(`cannot read the token cache file ${path}: ${errorCode(error)}`, { cause: error });
  }
  try {
    const value = JSON.parse(text) as unknown;
    if (typeof value === 'object' && value !== null && !Array.isArray(value))
      return value as Record<string, unknown>;
  } catch {
    // reported below, without quoting the content (it holds tokens)
  }
  throw corrupt(path);
}

const isString = (value: unknown): value is string => typeof value === 'string' && value !== '';

const isStringList = (value: unknown): value is string[] => Array.isArray(value) && value.every(isString);

function isGrant(entry: Record<string, unknown>): entry is Record<string, unknown> & GrantEntry {
  return (
    isString(entry.issuer) &&
    isString(entry.clientId) &&
    isString(entry.refreshToken) &&
    !('audience' in entry) &&
    (entry.audiences === undefined || isStringList(entry.audiences))
  );
}

function isClusters(entry: Record<string, unknown>): entry is Record<string, unknown> & ClustersEntry {
  return (
    isString(entry.issuer) &&
    isString(entry.clientId) &&
    isStringList(entry.audiences) &&
    (entry.requiredAcr === undefined ||
      (typeof entry.requiredAcr === 'object' &&
        entry.requiredAcr !== null &&
        !Array.isArray(entry.requiredAcr) &&
        Object.values(entry.requiredAcr).every(isString)))
  );
}

function isAccess(entry: Record<string, unknown>): entry is Record<string, unknown> & AccessEntry {
  return (
    isString(entry.issuer) &&
    isString(entry.clientId) &&
    isString(entry.audience) &&
    isString(entry.accessToken) &&
    typeof entry.expiresAt === 'number' &&
    Number.isFinite(entry.expiresAt) &&
    (entry.acr === undefined || isString(entry.acr))
  );
}

/** Writes `value` as JSON to a new 0600 file beside `path`, then renames it over `path`. */
async function writeAtomically(path: string, value: object): Promise<void> {
  const temporary = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    const file = await open(temporary, 'wx', 0o600);
    try {
      await file.writeFile(`${JSON.stringify(value)}\n`);
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(temporary, path);
  } catch (error) {
    await unlink(temporary).catch(() => undefined);
    throw cannotWrite(path, error);
  }
}
