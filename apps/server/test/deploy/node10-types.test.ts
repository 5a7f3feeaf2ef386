import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

// A TypeScript project that still resolves modules the old way (`moduleResolution: node10`, what
// `module: commonjs` implies) reads no `exports`: it finds types through `types` and, for a
// subpath such as `@idgate/core/admin`, `typesVersions`.
const CONSUMER = `
import { durationSeconds } from '@idgate/schema';
import { createIdgateClient } from '@idgate/sdk';
import { addCluster } from '@idgate/core/admin';
import { createMemoryStorage } from '@idgate/core/testing';
const seconds: number | undefined = durationSeconds('1h');
const client: ReturnType<typeof createIdgateClient> = createIdgateClient({ baseUrl: 'https://id.example.com' });
export { seconds, client, addCluster, createMemoryStorage };
`;

describe('the published packages under moduleResolution node10', () => {
  it('give their types, subpaths included', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'idgate-node10-'));
    try {
      mkdirSync(join(dir, 'node_modules', '@idgate'), { recursive: true });
      for (const [name, path] of [
        ['schema', 'packages/schema'],
        ['core', 'packages/core'],
        ['sdk', 'packages/sdk'],
      ])
        symlinkSync(join(ROOT, path as string), join(dir, 'node_modules', '@idgate', name as string));
      writeFileSync(join(dir, 'consumer.ts'), CONSUMER);
      writeFileSync(
        join(dir, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            module: 'commonjs',
            moduleResolution: 'node10',
            target: 'es2022',
            strict: true,
            noEmit: true,
            skipLibCheck: true,
            types: [],
          },
          files: ['consumer.ts'],
        }),
      );
      const result = await promisify(execFile)(process.execPath, [TSC, '-p', dir]).then(
        () => ({ code: 0, stdout: '' }),
        (error: { code: number; stdout: string }) => ({ code: error.code, stdout: error.stdout }),
      );
      expect(result).toEqual({ code: 0, stdout: '' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
