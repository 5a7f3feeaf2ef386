import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root folder. */
export const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

/** One documentation file: its path from the root, and its text. */
export interface DocFile {
  readonly path: string;
  readonly text: string;
}

/** A documentation file by its path from the root (`docs/admin/cli.md`). */
export function readDoc(path: string): string {
  return readFileSync(join(ROOT, path), 'utf8');
}

/**
 * The user documentation: the root README first (its quick start comes before everything), then
 * every Markdown page under docs/, by path.
 */
export function userDocs(): DocFile[] {
  const pages = (readdirSync(join(ROOT, 'docs'), { recursive: true }) as string[])
    .map((path) => path.split('\\').join('/'))
    .filter((path) => path.endsWith('.md'))
    .sort()
    .map((path) => `docs/${path}`);
  return ['README.md', ...pages].map((path) => ({ path, text: readDoc(path) }));
}
