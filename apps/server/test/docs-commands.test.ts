import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cliEnv, SECRET } from './cli/support.js';
import { ROOT, userDocs } from './helpers/docs.js';

/** Every command line of a Markdown file's `sh` blocks: continuations joined, comments dropped. */
function shellCommands(markdown: string): string[] {
  const blocks = [...markdown.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1] as string);
  return blocks.flatMap((block) =>
    block
      .replace(/\\\n\s*/g, ' ')
      .split('\n')
      .map((line) => line.replace(/\s+#.*$/, '').trim())
      .filter((line) => line !== '' && !line.startsWith('#')),
  );
}

// The README's first, then docs/ page by page.
const commands = userDocs().flatMap(({ text }) => shellCommands(text));
const viaPnpm = commands.filter((line) => /^pnpm\s+(-\S+\s+)*idgate\b/.test(line));
// A command shown on two pages (the quick start's init) runs once, where it first appears.
const documentedJson = [...new Set(viaPnpm.filter((line) => /\s--json\b/.test(line)))];

describe('the documentation’s idgate command lines', () => {
  it('run the CLI through pnpm silently, so --json output is clean', () => {
    expect(viaPnpm.length).toBeGreaterThan(0);
    expect(viaPnpm.filter((line) => !line.startsWith('pnpm -s idgate '))).toEqual([]);
  });

  it('include the quick start’s init --json', () => {
    expect(documentedJson[0]).toBe('pnpm -s idgate init --json');
  });
});

describe('each documented `pnpm -s idgate … --json`, run as written', () => {
  let dir: string;
  beforeAll(async () => {
    assertBuilt();
    dir = await mkdtemp(join(tmpdir(), 'idgate-docs-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  // In documentation order on one database: init first, as the quick start does.
  it.each(documentedJson.map((line) => [line]))(
    'prints exactly one JSON document on stdout: %s',
    async (line) => {
      const env = cliEnv({ IDGATE_DATABASE_URL: `sqlite:${join(dir, 'idgate.db')}`, IDGATE_SECRET: SECRET });
      const { code, stdout, stderr } = await new Promise<{ code: number; stdout: string; stderr: string }>(
        (resolve) => {
          execFile('sh', ['-c', line], { cwd: ROOT, env }, (error, out, err) =>
            resolve({ code: error === null ? 0 : Number(error.code ?? 1), stdout: out, stderr: err }),
          );
        },
      );
      expect({ code, stderr: code === 0 ? '' : stderr }).toEqual({ code: 0, stderr: '' });
      expect(() => JSON.parse(stdout)).not.toThrow();
      expect(typeof JSON.parse(stdout)).toBe('object');
    },
    60_000,
  );
});
