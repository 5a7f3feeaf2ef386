import { readFile, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { SetupArgs } from '../src/args.js';
import { TokenCache } from '../src/cache.js';
import { kubeconfigPath, setup } from '../src/setup.js';
import { tempDir } from './helpers/plugin.js';

const args = (kubeconfig: string, overrides: Partial<SetupArgs> = {}): SetupArgs => ({
  command: 'setup',
  issuer: 'https://id.example.com/oauth',
  clientId: 'kubectl',
  cluster: 'prod',
  server: 'https://10.0.0.1:6443',
  certificateAuthority: undefined,
  kubeconfig,
  context: undefined,
  execCommand: 'kubectl-idgate',
  // never the person's own ~/.kube/cache: setup remembers the cluster there
  cacheDir: join(dirname(kubeconfig), 'cache'),
  device: false,
  ...overrides,
});

describe('kubectl-idgate setup', () => {
  it('creates a kubeconfig (mode 0600) with the cluster, an exec user kubectl 1.20 accepts, and the context', async () => {
    const path = join(await tempDir('setup'), 'sub', 'config');
    await setup(args(path), {});
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect(parse(await readFile(path, 'utf8'))).toEqual({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'prod', cluster: { server: 'https://10.0.0.1:6443' } }],
      users: [
        {
          name: 'idgate-prod',
          user: {
            exec: {
              apiVersion: 'client.authentication.k8s.io/v1beta1',
              command: 'kubectl-idgate',
              args: [
                'get-token',
                '--issuer',
                'https://id.example.com/oauth',
                '--client-id',
                'kubectl',
                '--cluster',
                'prod',
                '--cache-dir',
                join(dirname(path), 'cache'),
              ],
              interactiveMode: 'IfAvailable',
              provideClusterInfo: false,
            },
          },
        },
      ],
      contexts: [{ name: 'prod', context: { cluster: 'prod', user: 'idgate-prod' } }],
      'current-context': 'prod',
    });
  });

  it('remembers each cluster set up, once, so that the next sign-in asks for all of them', async () => {
    const dir = await tempDir('setup');
    const path = join(dir, 'config');
    for (const cluster of ['prod', 'stage', 'prod']) await setup(args(path, { cluster }), {});
    await setup(args(path, { cluster: 'dev', clientId: 'other' }), {});
    const cache = await TokenCache.open(join(dir, 'cache'));
    expect(await cache.readClusters('https://id.example.com/oauth', 'kubectl')).toEqual([
      'kubernetes:prod',
      'kubernetes:stage',
    ]);
    expect(await cache.readClusters('https://id.example.com/oauth', 'other')).toEqual(['kubernetes:dev']);
  });

  it('replaces its own entries on a second run and keeps everything else', async () => {
    const path = join(await tempDir('setup'), 'config');
    await writeFile(path, 'apiVersion: v1\nkind: Config\npreferences: {colors: true}\nclusters: []\n');
    await setup(args(path), {});
    await setup(args(path, { server: 'https://10.0.0.2:6443', context: 'production', device: true }), {});
    const config = parse(await readFile(path, 'utf8'));
    expect(config.preferences).toEqual({ colors: true });
    expect(config.clusters).toEqual([{ name: 'prod', cluster: { server: 'https://10.0.0.2:6443' } }]);
    expect(config.users).toHaveLength(1);
    expect(config.users[0].user.exec.args.at(-1)).toBe('--device');
    expect(config.contexts.map((c: { name: string }) => c.name)).toEqual(['prod', 'production']);
    expect(config['current-context']).toBe('production');
  });

  it('embeds the certificate authority, and refuses a file that is not a PEM certificate', async () => {
    const dir = await tempDir('setup');
    const path = join(dir, 'config');
    const pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
    await writeFile(join(dir, 'ca.crt'), pem);
    await setup(args(path, { certificateAuthority: join(dir, 'ca.crt') }), {});
    const config = parse(await readFile(path, 'utf8'));
    expect(Buffer.from(config.clusters[0].cluster['certificate-authority-data'], 'base64').toString()).toBe(
      pem,
    );
    await writeFile(join(dir, 'bad.crt'), 'hello');
    await expect(setup(args(path, { certificateAuthority: join(dir, 'bad.crt') }), {})).rejects.toThrow(
      `${join(dir, 'bad.crt')} is not a PEM certificate`,
    );
    await expect(setup(args(path, { certificateAuthority: join(dir, 'none.crt') }), {})).rejects.toThrow(
      /cannot read the certificate authority .*: ENOENT/,
    );
  });

  it('refuses a kubeconfig that is not YAML, without touching it', async () => {
    const path = join(await tempDir('setup'), 'config');
    await writeFile(path, 'clusters: [\n');
    await expect(setup(args(path), {})).rejects.toThrow(/is not valid YAML/);
    expect(await readFile(path, 'utf8')).toBe('clusters: [\n');
  });

  it('edits the first file of KUBECONFIG when --kubeconfig is not given', () => {
    expect(kubeconfigPath(undefined, { KUBECONFIG: '/a/config:/b/config' })).toBe('/a/config');
    expect(kubeconfigPath('rel/config', { KUBECONFIG: '/a/config' })).toMatch(/\/rel\/config$/);
  });
});
