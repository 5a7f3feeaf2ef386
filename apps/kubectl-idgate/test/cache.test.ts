import { spawn } from 'node:child_process';
import { chmod, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { endsWithTest } from '../../server/test/helpers/child-processes.js';
import { TokenCache } from '../src/cache.js';
import { withLock } from '../src/lock.js';
import { tempDir } from './helpers/plugin.js';

const access = (audience: string, accessToken = `at-${audience}`) => ({
  issuer: 'https://id.example.com/oauth',
  clientId: 'kubectl',
  audience,
  accessToken,
  expiresAt: 1_800_000_000_000,
});

describe('the token cache files', () => {
  it('creates the folder 0700 (tightening an existing one) and files 0600', async () => {
    const dir = join(await tempDir('unit'), 'nested', 'idgate');
    const cache = await TokenCache.open(dir);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    await chmod(dir, 0o755);
    await TokenCache.open(dir);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    await cache.writeAccess(access('kubernetes:a'));
    await cache.writeGrant({
      issuer: 'https://id.example.com/oauth',
      clientId: 'kubectl',
      refreshToken: 'rt',
    });
    for (const name of await readdir(dir)) expect((await stat(join(dir, name))).mode & 0o777).toBe(0o600);
  });

  it('keeps one refresh token per issuer and client, and access tokens per audience', async () => {
    const cache = await TokenCache.open(await tempDir('unit'));
    await cache.writeGrant({
      issuer: 'https://id.example.com/oauth',
      clientId: 'kubectl',
      refreshToken: 'rt-1',
    });
    await cache.writeAccess(access('kubernetes:a'));
    await cache.writeAccess(access('kubernetes:b'));
    await cache.writeGrant({
      issuer: 'https://id.example.com/oauth',
      clientId: 'kubectl',
      refreshToken: 'rt-2',
    });
    expect(await cache.readGrant('https://id.example.com/oauth', 'kubectl')).toEqual({
      issuer: 'https://id.example.com/oauth',
      clientId: 'kubectl',
      refreshToken: 'rt-2',
    });
    expect(
      (await cache.readAccess('https://id.example.com/oauth', 'kubectl', 'kubernetes:a'))?.accessToken,
    ).toBe('at-kubernetes:a');
    expect(
      (await cache.readAccess('https://id.example.com/oauth', 'kubectl', 'kubernetes:b'))?.accessToken,
    ).toBe('at-kubernetes:b');
    expect(
      await cache.readAccess('https://id.example.com/oauth', 'other-client', 'kubernetes:a'),
    ).toBeUndefined();
    const signIns = await cache.signIns();
    expect(signIns).toHaveLength(1);
    expect(signIns[0]?.audiences.sort()).toEqual(['kubernetes:a', 'kubernetes:b']);
    await cache.clearSignIn('https://id.example.com/oauth', 'kubectl');
    expect(await readdir(cache.dir)).toEqual([]);
  });

  it('writes atomically: no temporary file is left, and a reader sees whole content', async () => {
    const cache = await TokenCache.open(await tempDir('unit'));
    await Promise.all(
      Array.from({ length: 20 }, (_, i) => cache.writeAccess(access('kubernetes:a', `token-${i}`))),
    );
    expect((await readdir(cache.dir)).filter((name) => name.endsWith('.tmp'))).toEqual([]);
    const read = await cache.readAccess('https://id.example.com/oauth', 'kubectl', 'kubernetes:a');
    expect(read?.accessToken).toMatch(/^token-\d+$/);
  });

  it('reports a file it cannot read or understand without quoting it', async () => {
    const cache = await TokenCache.open(await tempDir('unit'));
    const path = cache.accessPath('https://id.example.com/oauth', 'kubectl', 'kubernetes:a');
    await writeFile(path, '{"accessToken":"secret-token-value"');
    await expect(cache.readAccess('https://id.example.com/oauth', 'kubectl', 'kubernetes:a')).rejects.toThrow(
      `the token cache file ${path} is not valid: remove it, or run kubectl-idgate logout`,
    );
    await writeFile(path, JSON.stringify({ ...access('kubernetes:other') }));
    await expect(cache.readAccess('https://id.example.com/oauth', 'kubectl', 'kubernetes:a')).rejects.toThrow(
      /is not valid/,
    );
    if (process.getuid?.() !== 0) {
      await chmod(path, 0o000);
      await expect(
        cache.readAccess('https://id.example.com/oauth', 'kubectl', 'kubernetes:a'),
      ).rejects.toThrow(`cannot read the token cache file ${path}: EACCES`);
    }
  });
});

describe('the cache lock', () => {
  it('lets one task at a time run', async () => {
    const path = join(await tempDir('lock'), 'a.lock');
    let running = 0;
    let most = 0;
    await Promise.all(
      Array.from({ length: 8 }, () =>
        withLock(
          path,
          async () => {
            running += 1;
            most = Math.max(most, running);
            await new Promise((resolve) => setTimeout(resolve, 10));
            running -= 1;
          },
          { pollMs: 5 },
        ),
      ),
    );
    expect(most).toBe(1);
    expect(await readdir(join(path, '..'))).toEqual([]);
  });

  it('takes over the lock of a process that died', async () => {
    const path = join(await tempDir('lock'), 'a.lock');
    const dead = endsWithTest(spawn(process.execPath, ['-e', '']));
    await new Promise((resolve) => dead.on('close', resolve));
    const { hostname } = await import('node:os');
    await writeFile(path, JSON.stringify({ pid: dead.pid, host: hostname(), createdAt: Date.now() }));
    expect(await withLock(path, async () => 'ran', { waitMs: 2_000 })).toBe('ran');
  });

  it('takes over a lock older than staleMs, and waits for a live one', async () => {
    const path = join(await tempDir('lock'), 'a.lock');
    await writeFile(
      path,
      JSON.stringify({ pid: process.pid, host: 'elsewhere', createdAt: Date.now() - 60_000 }),
    );
    expect(await withLock(path, async () => 'ran', { staleMs: 30_000, waitMs: 2_000 })).toBe('ran');
    await writeFile(path, JSON.stringify({ pid: process.pid, host: 'elsewhere', createdAt: Date.now() }));
    await expect(withLock(path, async () => 'ran', { waitMs: 200, pollMs: 10 })).rejects.toThrow(
      /timed out waiting for the token cache lock/,
    );
    expect(JSON.parse(await readFile(path, 'utf8')).host).toBe('elsewhere');
  });
});
