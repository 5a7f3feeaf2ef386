import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { createContext } from '../src/cli/context.js';
import { buildProgram } from '../src/cli/program.js';
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

describe('the README CLI reference', () => {
  const block = /## CLI\n[\s\S]*?```\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
  const reference = block.split('\n').filter((line) => line.startsWith('idgate '));
  const program = buildProgram(
    createContext({ stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: {} }),
  );

  it('lists every command group of the CLI', () => {
    const groups = new Set(reference.map((line) => line.split(/\s+/)[1]));
    for (const command of program.commands) expect(groups, command.name()).toContain(command.name());
  });

  it.each(reference.map((line) => [line]))('names commands and options the CLI has: %s', (line) => {
    const words = line.split(/\s+/);
    const group = program.commands.find((c) => c.name() === words[1]);
    expect(group, words[1]).toBeDefined();
    if (group === undefined || group.commands.length === 0) return;
    // `a | b <x> | c`: every bare word after a `|` (or the first) is a subcommand.
    const named = words
      .slice(2)
      .filter((word, i, all) => (i === 0 || all[i - 1] === '|') && /^[a-z-]+$/.test(word));
    const subcommands = named.map((name) => group.commands.find((c) => c.name() === name));
    for (const [i, sub] of subcommands.entries()) expect(sub, `${words[1]} ${named[i]}`).toBeDefined();
    const options = new Set(subcommands.flatMap((sub) => sub?.options.map((o) => o.long) ?? []));
    for (const option of line.match(/--[a-z-]+/g) ?? [])
      expect(options, `${line}: ${option}`).toContain(option);
  });
});
