import { readdir, readFile, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { AdminError, applyDeclarations, type SecretReader } from '@idgate/core/admin';
import {
  type ApplyResult,
  type AuditActor,
  DECLARED_SECRET_FIELDS,
  Declarations,
  describeFirstIssue,
  type SecretReference,
} from '@idgate/schema';
import { adminPorts } from './admin-ports.js';
import type { Services } from './services.js';
import { withDeclarationsLock } from './storage/locks.js';

/** The actor of changes the declarations file makes at start (`declarations.path`). */
const CONFIG_ACTOR: AuditActor = { kind: 'system', id: null, name: 'declarations' };

/** The lists a declarations file may hold. */
const KINDS = Object.keys(Declarations.shape) as (keyof Declarations)[];

const EXTENSIONS = /\.(ya?ml|json)$/i;

const invalid = (message: string) => new AdminError('invalid_input', 'declarations', message);

/**
 * The declarations in `paths`: each a file (YAML or JSON, one or more YAML documents) or a
 * directory, whose `.yaml`, `.yml` and `.json` files are read in name order (not its
 * subdirectories). Lists of the same kind from several files or documents are joined.
 * @throws AdminError `invalid_input` naming the file and the first problem.
 * @example const { declarations, files } = await readDeclarationFiles(['deploy/idgate']);
 */
export async function readDeclarationFiles(
  paths: readonly string[],
): Promise<{ declarations: Declarations; files: string[] }> {
  const files: string[] = [];
  for (const path of paths) {
    const info = await stat(path).catch((error: NodeJS.ErrnoException) => {
      throw invalid(`${path}: cannot be read (${error.code ?? 'error'})`);
    });
    if (!info.isDirectory()) files.push(path);
    else {
      const names = (await readdir(path)).filter((name) => EXTENSIONS.test(name)).sort();
      if (names.length === 0) throw invalid(`${path}: holds no .yaml, .yml or .json file`);
      files.push(...names.map((name) => join(path, name)));
    }
  }
  // Loaded here: a server that reads no declarations never parses YAML.
  const { parseAllDocuments } = createRequire(import.meta.url)('yaml') as typeof import('yaml');
  const joined: Record<string, unknown[]> = {};
  for (const file of files) {
    const text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
      throw invalid(`${file}: cannot be read (${error.code ?? 'error'})`);
    });
    const documents = parseAllDocuments(text);
    if (!Array.isArray(documents)) throw invalid(`${file}: not valid YAML`);
    for (const [index, document] of documents.entries()) {
      const where = documents.length > 1 ? `${file} (document ${index + 1})` : file;
      if (document.errors.length > 0)
        throw invalid(`${where}: not valid YAML (${document.errors[0]?.message.split('\n')[0]})`);
      const content: unknown = document.toJS();
      if (content === null || content === undefined) continue;
      const parsed = Declarations.safeParse(content);
      if (!parsed.success)
        throw invalid(
          `${where}: ${describeFirstIssue(parsed.error, {
            input: content,
            positions: true,
            secrets: DECLARED_SECRET_FIELDS,
            label: (path) => path.replace(/\.(\d+)(?=\.|$)/g, '[$1]') || 'the file',
          })}`,
        );
      for (const kind of KINDS) {
        const list = content as Record<string, unknown[] | undefined>;
        const items = list[kind];
        if (items !== undefined) joined[kind] = [...(joined[kind] ?? []), ...items];
      }
    }
  }
  return { declarations: Declarations.parse(joined), files };
}

/** What a secret reader may read. */
export interface SecretReaderPolicy {
  /** The environment to read `env` references from. */
  env: NodeJS.ProcessEnv;
  /** Only variables whose names start with this (the admin API's: `IDGATE_DECLARED_`). */
  envPrefix?: string;
  /** Whether `file` references are read (not over the admin API). */
  files: boolean;
}

/**
 * Reads declared secrets from environment variables and files, as `policy` allows: a file's content
 * without one trailing newline (as Kubernetes mounts secrets and `echo` writes them).
 * @example const readSecret = nodeSecretReader({ env: process.env, files: true });
 */
export function nodeSecretReader(policy: SecretReaderPolicy): SecretReader {
  return async (reference: SecretReference, where: string) => {
    let value: string | undefined;
    if ('env' in reference) {
      if (policy.envPrefix !== undefined && !reference.env.startsWith(policy.envPrefix))
        throw invalid(
          `${where}: environment variable ${reference.env} may not be read here; over the admin API only variables named ${policy.envPrefix}* are`,
        );
      value = policy.env[reference.env];
      if (value === undefined || value === '')
        throw invalid(`${where}: environment variable ${reference.env} is not set`);
    } else {
      if (!policy.files) throw invalid(`${where}: files are not read over the admin API; use { env: NAME }`);
      value = await readFile(reference.file, 'utf8').catch((error: NodeJS.ErrnoException) => {
        throw invalid(`${where}: file ${reference.file} cannot be read (${error.code ?? 'error'})`);
      });
      value = value.replace(/\r?\n$/, '');
      if (value === '') throw invalid(`${where}: file ${reference.file} is empty`);
    }
    return value;
  };
}

/**
 * Applies the declarations of `declarations.path` (the file read at start), with the manager and
 * pruning the settings give, secrets read from `env` and files; undefined when none is set.
 * @throws AdminError naming the file and the first problem; the server does not start then.
 */
export async function applyDeclaredPath(
  services: Services,
  env: NodeJS.ProcessEnv,
): Promise<ApplyResult | undefined> {
  const { path, manager, prune } = services.config.declarations;
  if (path === undefined) return undefined;
  const { declarations } = await readDeclarationFiles([path]);
  const readSecret = nodeSecretReader({ env, files: true });
  const ports = { ...adminPorts(services), auditActor: () => CONFIG_ACTOR, readSecret };
  return withDeclarationsLock(services.database, () =>
    applyDeclarations(ports, declarations, { manager, prune, dryRun: false }),
  );
}

/** One line of what applying did: `2 created, 1 updated, 0 deleted, 5 unchanged (1 drifted)`. */
export function appliedSummary(result: ApplyResult): string {
  const { create, update, delete: deleted, unchanged, drift } = result.summary;
  return `${create} created, ${update} updated, ${deleted} deleted, ${unchanged} unchanged${drift > 0 ? ` (${drift} drifted)` : ''}`;
}
