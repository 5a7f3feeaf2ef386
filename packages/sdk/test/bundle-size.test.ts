import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build, type Metafile } from 'esbuild';
import { describe, expect, it } from 'vitest';

// What a service that bundles the SDK ships: the programs below, bundled as an application would
// (esbuild, minified, tree-shaken, ESM for the browser), from the packages' built `dist` (the
// files npm publishes), not from their sources.
const SDK_DIR = fileURLToPath(new URL('..', import.meta.url));
const SDK_ENTRY = fileURLToPath(new URL('../dist/index.js', import.meta.url));

/**
 * What a TokenReview client may ship, in gzip bytes: issue 14's goal. The admin API is a client of
 * its own (`createIdgateAdminClient`), so a program that only reviews tokens bundles none of it.
 */
const REVIEW_BUDGET = 25_000;
/**
 * What a program calling every admin method may ship, in gzip bytes. It grows with the admin API:
 * 47 methods were 23.7 KB; incident response and the audit chain's verification made 59 methods,
 * 25.6 KB (about 0.16 KB a method, their schemas included); groups, cluster changes, trusts,
 * second factors and declarations made 75, 27.8 KB (0.14 KB a method). The budget is that and
 * some room; a jump past it without new methods means a dependency or a copy crept in.
 */
const ADMIN_BUDGET = 29_000;

const REVIEW_PROGRAM = `
import { createIdgateClient } from '@idgate/sdk';
const idgate = createIdgateClient({ baseUrl: 'https://idgate.example.com', apiKey: 'idg_key' });
const review = await idgate.reviewToken('a-token', { audiences: ['kubernetes:prod'] });
console.log(review.status.authenticated);
`;

/** Every method of the admin client, by name (what an admin console would bundle). */
async function adminMethods(): Promise<string[]> {
  const { createIdgateAdminClient } = (await import(SDK_ENTRY)) as typeof import('../src/index.js');
  const admin = createIdgateAdminClient({ baseUrl: 'https://idgate.example.com', apiKey: 'idg_key' });
  const names = new Set<string>();
  for (let o: object | null = admin; o !== null && o !== Object.prototype; o = Object.getPrototypeOf(o)) {
    for (const name of Object.getOwnPropertyNames(o)) if (name !== 'constructor') names.add(name);
  }
  return [...names].sort();
}

const adminProgram = (methods: string[]) => `
import { createIdgateAdminClient } from '@idgate/sdk';
const admin = createIdgateAdminClient({ baseUrl: 'https://idgate.example.com', apiKey: 'idg_key' });
${methods.map((method) => `console.log(await admin.${method}('a', {}));`).join('\n')}
`;

interface BundleSize {
  /** The bundled program. */
  text: string;
  minified: number;
  gzip: number;
  /** Output bytes by package (`zod`, `ky`, `@idgate/schema`, `@idgate/sdk`). */
  byPackage: Record<string, number>;
}

async function bundle(program: string): Promise<BundleSize> {
  const result = await build({
    stdin: { contents: program, resolveDir: SDK_DIR, sourcefile: 'program.js', loader: 'js' },
    bundle: true,
    minify: true,
    treeShaking: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    write: false,
    absWorkingDir: SDK_DIR,
    metafile: true,
    logLevel: 'silent',
    plugins: [
      {
        // the program imports the package by name, as its users do: point the name at its build
        name: 'idgate-sdk',
        setup(builder) {
          builder.onResolve({ filter: /^@idgate\/sdk$/ }, () => ({ path: SDK_ENTRY }));
        },
      },
    ],
  });
  const [output] = result.outputFiles;
  if (output === undefined) throw new Error('esbuild wrote no output');
  return {
    text: output.text,
    minified: output.contents.byteLength,
    gzip: gzipSync(output.contents, { level: 9 }).byteLength,
    byPackage: byPackage(result.metafile),
  };
}

function byPackage(metafile: Metafile): Record<string, number> {
  const sizes: Record<string, number> = {};
  for (const output of Object.values(metafile.outputs)) {
    for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
      const name =
        /node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?((?:@[^/]+\/)?[^/]+)/.exec(input)?.[1] ??
        (input.startsWith('dist/')
          ? '@idgate/sdk'
          : input.includes('schema/dist/')
            ? '@idgate/schema'
            : 'program');
      sizes[name] = (sizes[name] ?? 0) + bytesInOutput;
    }
  }
  return sizes;
}

const kb = (bytes: number) => `${(bytes / 1000).toFixed(1)} KB`;
const report = (name: string, size: BundleSize) =>
  `${name}: ${kb(size.minified)} minified, ${kb(size.gzip)} gzip (${Object.entries(size.byPackage)
    .sort(([, a], [, b]) => b - a)
    .map(([pkg, bytes]) => `${pkg} ${kb(bytes)}`)
    .join(', ')})`;

describe('the bundle an application ships', () => {
  it(`keeps createIdgateClient + reviewToken under ${kb(REVIEW_BUDGET)} gzip, with response validation and no admin method`, async () => {
    const size = await bundle(REVIEW_PROGRAM);
    console.log(report('createIdgateClient + reviewToken', size));
    // the answer is still checked against TokenReviewResponse: zod's parser is in the bundle
    expect(size.byPackage.zod ?? 0).toBeGreaterThan(0);
    // nothing of the admin API: neither its paths nor its methods
    expect(size.text).not.toContain('admin/v1');
    expect(size.text).not.toContain('listUsers');
    expect(size.gzip).toBeLessThan(REVIEW_BUDGET);
  });

  it(`keeps createIdgateAdminClient + every admin method within ${kb(ADMIN_BUDGET)} gzip`, async () => {
    const methods = await adminMethods();
    // the admin client has the whole admin API and nothing a relying party calls
    expect(methods).toEqual(
      expect.arrayContaining(['listUsers', 'createCluster', 'listEvents', 'followEvents']),
    );
    expect(methods).not.toContain('reviewToken');
    const size = await bundle(adminProgram(methods));
    console.log(report(`createIdgateAdminClient + ${methods.length} admin methods`, size));
    expect(size.text).not.toContain('oauth/authenticate');
    expect(size.gzip).toBeLessThan(ADMIN_BUDGET);
  });
});
