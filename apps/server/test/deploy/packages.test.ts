import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const LICENSE = readFileSync(join(ROOT, 'LICENSE'), 'utf8');

// The published packages, the folder each lives in, and how its README example names its imports.
const PUBLISHED = [
  { name: '@idgate/schema', dir: 'packages/schema', imports: { '../src/index.js': '@idgate/schema' } },
  {
    name: '@idgate/core',
    dir: 'packages/core',
    imports: {
      '../src/index.js': '@idgate/core',
      '../src/admin.js': '@idgate/core/admin',
      '../src/testing.js': '@idgate/core/testing',
    },
  },
  { name: '@idgate/sdk', dir: 'packages/sdk', imports: { '../src/index.js': '@idgate/sdk' } },
  { name: '@idgate/kubectl', dir: 'apps/kubectl-idgate', imports: { '../src/index.js': '@idgate/kubectl' } },
  // its README shows the idgate command (scripts/check-packages.mjs runs it from the installed tarball)
  { name: '@idgate/server', dir: 'apps/server', imports: undefined },
] as const;

function packedFiles(dir: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    // what the build left: the package's prepack (which builds it) is not run here, where other
    // packages' tests read the same dist/ files (scripts/check-packages.mjs packs for real)
    const env = { ...process.env, npm_config_ignore_scripts: 'true' };
    execFile('pnpm', ['pack', '--dry-run', '--json'], { cwd: join(ROOT, dir), env }, (error, stdout) => {
      if (error !== null) return reject(error);
      const packed = JSON.parse(stdout) as { files: Array<{ path: string }> };
      resolve(packed.files.map((file) => file.path));
    });
  });
}

describe('the root LICENSE', () => {
  it('is the Apache License 2.0 that every package.json names', () => {
    expect(LICENSE).toMatch(/^\s*Apache License\s+Version 2\.0, January 2004/);
    expect(LICENSE).toContain('END OF TERMS AND CONDITIONS');
    for (const { dir } of PUBLISHED) {
      const manifest = JSON.parse(readFileSync(join(ROOT, dir, 'package.json'), 'utf8')) as {
        license?: string;
      };
      expect(manifest.license, dir).toBe('Apache-2.0');
    }
  });
});

describe.each(PUBLISHED)('the published package $name', ({ name, dir, imports }) => {
  const readme = readFileSync(join(ROOT, dir, 'README.md'), 'utf8');

  it('has a README saying what it is, how to install it, and linking to the root README', () => {
    expect(readme.startsWith(`# ${name}\n`)).toBe(true);
    expect(readme).toContain(`npm install ${name === '@idgate/kubectl' ? '-g ' : ''}${name}`);
    expect(readme).toContain('Node.js 20.19 or later');
    expect(readme).toContain('](../../README.md)');
  });

  // the server's README shows its command instead, which scripts/check-packages.mjs runs
  if (imports !== undefined)
    it('shows the usage example the package typechecks (test/readme-example.ts), imports named as a user writes them', () => {
      let example = readFileSync(join(ROOT, dir, 'test', 'readme-example.ts'), 'utf8');
      for (const [relative, published] of Object.entries(imports)) {
        example = example.replaceAll(`'${relative}'`, `'${published}'`);
      }
      expect(example).not.toMatch(/from '\.\.?\//);
      expect(readme).toContain(`\`\`\`ts\n${example}\`\`\``);
    });

  it('builds before it is packed (prepack), and packs the files its manifest names', () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, dir, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
      files: string[];
    };
    expect(manifest.scripts.prepack).toBe('node ../../scripts/prepack.mjs');
    expect(manifest.files).toContain('dist');
  });

  it('carries the root LICENSE', () => {
    expect(readFileSync(join(ROOT, dir, 'LICENSE'), 'utf8')).toBe(LICENSE);
  });

  it('packs README.md and LICENSE (pnpm pack --dry-run)', async () => {
    const files = await packedFiles(dir);
    expect(files).toEqual(expect.arrayContaining(['README.md', 'LICENSE', 'package.json']));
    expect(files.some((file) => file.startsWith('dist/'))).toBe(true);
    // The README's example is a test file: it stays out of the package.
    expect(files.filter((file) => file.startsWith('test/'))).toEqual([]);
  }, 60_000);
});

describe('the published server, @idgate/server', () => {
  const dir = join(ROOT, 'apps/server');
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
    private?: boolean;
    bin: Record<string, string>;
    files: string[];
    dependencies: Record<string, string>;
    devDependencies: Record<string, string>;
  };

  it('links the idgate command to the checked-in launcher, and packs bin/ and dist/ alone', async () => {
    expect(manifest.private).toBeUndefined();
    expect(manifest.bin).toEqual({ idgate: './bin/idgate.js' });
    expect(manifest.files).toEqual(['bin', 'dist']);
    const files = await packedFiles('apps/server');
    expect(files).toContain('bin/idgate.js');
    expect(files).toContain('dist/bin.js');
    expect(files).toContain('dist/storage/migrations/index.js');
    const outside = files.filter((file) => !/^(bin|dist)\/|^(README\.md|LICENSE|package\.json)$/.test(file));
    expect(outside).toEqual([]);
  }, 60_000);

  /** The bare module names that `source` loads at run time: type-only imports are erased. */
  const runtimeImports = (source: string) =>
    [
      ...source.matchAll(/^(?:import|export)\s+(?!type\b)[^'";]*?\bfrom\s+'([^']+)'/gm),
      ...source.matchAll(/^import\s+'([^']+)'/gm),
      ...source.matchAll(/\bimport\(\s*'([^']+)'\s*\)/g),
      ...source.matchAll(/\bcreateRequire\([^)]*\)\(\s*'([^']+)'\s*\)/g),
    ]
      .map((match) => match[1] as string)
      .filter((specifier) => !specifier.startsWith('.') && !specifier.startsWith('node:'))
      .map((specifier) =>
        specifier
          .split('/')
          .slice(0, specifier.startsWith('@') ? 2 : 1)
          .join('/'),
      );

  it('depends (dependencies, which npm installs) on every package its source loads at run time', () => {
    const sources = (readdirSync(join(dir, 'src'), { recursive: true }) as string[]).filter((file) =>
      file.endsWith('.ts'),
    );
    const loaded = new Set(
      sources.flatMap((file) => runtimeImports(readFileSync(join(dir, 'src', file), 'utf8'))),
    );
    expect(loaded.size).toBeGreaterThan(10);
    const undeclared = [...loaded].filter((name) => manifest.dependencies[name] === undefined).sort();
    expect(undeclared, 'imported at run time but not in dependencies').toEqual([]);
  });

  it('reads what it imports as the checker does: type-only imports aside, require() through createRequire', () => {
    expect(
      runtimeImports(
        [
          "import type { Provider } from 'oidc-provider';",
          "import { type A, b } from 'fastify';",
          "import {\n  c,\n  d,\n} from '@opentelemetry/api/x';",
          "export { e } from 'kysely';",
          "export type { F } from 'vitest';",
          "const g = await import('pg');",
          "const { parse } = createRequire(import.meta.url)('yaml');",
          "import { h } from './local.js';",
          "import { i } from 'node:fs';",
        ].join('\n'),
      ),
    ).toEqual(['fastify', '@opentelemetry/api', 'kysely', 'pg', 'yaml']);
  });
});

describe('the SDK page, docs/sdk.md', () => {
  const section = readFileSync(join(ROOT, 'docs/sdk.md'), 'utf8');

  it('shows the SDK’s typechecked example', () => {
    const example = readFileSync(join(ROOT, 'packages/sdk/test/readme-example.ts'), 'utf8').replaceAll(
      "'../src/index.js'",
      "'@idgate/sdk'",
    );
    expect(section).toContain(`\`\`\`ts\n${example}\`\`\``);
  });

  /** Every method of `client` (its prototype chain), by name. */
  const methodsOf = (client: object) => {
    const methods = new Set<string>();
    for (let o: object | null = client; o !== null && o !== Object.prototype; o = Object.getPrototypeOf(o)) {
      for (const key of Object.getOwnPropertyNames(o)) {
        if (key !== 'constructor' && typeof (client as Record<string, unknown>)[key] === 'function')
          methods.add(key);
      }
    }
    return methods;
  };
  /** The methods named in backquotes in the page's list that starts with `heading`, up to `end`. */
  const namedIn = (heading: string, end: string) => {
    const start = section.indexOf(heading);
    const list = section.slice(start, section.indexOf(end, start));
    return [...list.matchAll(/`([a-z][A-Za-z]+)`/g)].map((match) => match[1] as string);
  };

  it.each([
    {
      name: 'client',
      heading: "The client's methods",
      end: "The admin client's methods",
      create: async () => (await import('@idgate/sdk')).createIdgateClient({ baseUrl: 'http://127.0.0.1:9' }),
      exported: ['parseAuthorizationResponse', 'createIdgateClient'],
    },
    {
      name: 'admin client',
      heading: "The admin client's methods",
      end: 'Command-line and desktop programs',
      create: async () =>
        (await import('@idgate/sdk')).createIdgateAdminClient({
          baseUrl: 'http://127.0.0.1:9',
          apiKey: 'idg_x',
        }),
      exported: ['createIdgateAdminClient'],
    },
  ])('names only methods the $name has, and every one it has', async ({ heading, end, create, exported }) => {
    const methods = methodsOf(await create());
    const named = namedIn(heading, end);
    expect(named.length).toBeGreaterThan(0);
    expect(named.filter((name) => !methods.has(name) && !exported.includes(name))).toEqual([]);
    const unlisted = [...methods].filter((name) => !named.includes(name)).sort();
    expect(unlisted, `methods missing from docs/sdk.md's "${heading}" list: ${unlisted.join(', ')}`).toEqual(
      [],
    );
  });
});
