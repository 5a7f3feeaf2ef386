import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { loadConfig } from '../src/config.js';

const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');
const yamlBlocks = [...readme.matchAll(/```yaml\n([\s\S]*?)```/g)].map((match) => match[1] as string);
const kubeconfigs = yamlBlocks.filter((block) => block.includes('kind: Config'));
const idgateConfigs = yamlBlocks.filter((block) => !block.includes('kind: Config'));

describe('the README', () => {
  it('has configuration examples', () => {
    expect(idgateConfigs.length).toBeGreaterThanOrEqual(5);
    expect(kubeconfigs).toHaveLength(1);
  });

  it('points the kube-apiserver webhook kubeconfig at /oauth/authenticate with an API key', () => {
    const kubeconfig = parseYaml(kubeconfigs[0] as string) as {
      clusters: Array<{ cluster: { server: string } }>;
      users: Array<{ user: { token: string } }>;
    };
    expect(kubeconfig.clusters[0]?.cluster.server).toMatch(/\/oauth\/authenticate$/);
    expect(kubeconfig.users[0]?.user.token).toMatch(/^idg_/);
  });

  it.each(idgateConfigs.map((block) => [block.split('\n')[0], block]))(
    'example starting with %s is a valid idgate configuration',
    (_first, block) => {
      const file = join(mkdtempSync(join(tmpdir(), 'idgate-readme-')), 'idgate.yaml');
      writeFileSync(file, block);
      expect(() => loadConfig({ file, env: {} })).not.toThrow();
    },
  );
});
