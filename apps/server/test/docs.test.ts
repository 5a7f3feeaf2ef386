import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { createContext } from '../src/cli/context.js';
import { buildProgram } from '../src/cli/program.js';
import { loadConfig } from '../src/config.js';
import { readDeclarationFiles } from '../src/declarations.js';
import { readDoc, userDocs } from './helpers/docs.js';

// Every YAML example of the user documentation (the README and docs/).
const yamlBlocks = userDocs().flatMap(({ text }) =>
  [...text.matchAll(/```yaml\n([\s\S]*?)```/g)].map((match) => match[1] as string),
);
// A CI job, a pod spec or a kubectl kubeconfig says so on its first line (`# GitHub Actions job`,
// `# .gitlab-ci.yml`, `# kubeconfig …`): those
// are read as YAML only. A declarations file (`idgate apply -f`) says so on its first line too.
const FOREIGN =
  /^# (GitHub Actions job|GitLab CI job|pod spec|\.github\/workflows\/|\.gitlab-ci\.yml|kubeconfig)/;
const foreignYaml = yamlBlocks.filter((block) => FOREIGN.test(block));
// The kube-apiserver's webhook kubeconfig (a CI job's says so on its first line, above).
const kubeconfigs = yamlBlocks.filter((block) => block.includes('kind: Config') && !FOREIGN.test(block));
const isDeclarations = (block: string) => /^# \S*declarations\.yaml$/.test(block.split('\n')[0] ?? '');
const declarationFiles = yamlBlocks.filter(isDeclarations);
const idgateConfigs = yamlBlocks.filter(
  (block) => !block.includes('kind: Config') && !FOREIGN.test(block) && !isDeclarations(block),
);

describe('the documentation', () => {
  it('has configuration examples', () => {
    expect(idgateConfigs.length).toBeGreaterThanOrEqual(5);
    expect(kubeconfigs).toHaveLength(1);
    expect(declarationFiles.length).toBeGreaterThanOrEqual(1);
  });

  it('points the kube-apiserver webhook kubeconfig at /oauth/authenticate with an API key', () => {
    const kubeconfig = parseYaml(kubeconfigs[0] as string) as {
      clusters: Array<{ cluster: { server: string } }>;
      users: Array<{ user: { token: string } }>;
    };
    expect(kubeconfig.clusters[0]?.cluster.server).toMatch(/\/oauth\/authenticate$/);
    expect(kubeconfig.users[0]?.user.token).toMatch(/^idg_/);
  });

  it.each(foreignYaml.map((block) => [block.split('\n')[0], block]))(
    'example %s is YAML',
    (_first, block) => {
      expect(parseYaml(block)).toBeTypeOf('object');
    },
  );

  it.each(idgateConfigs.map((block) => [block.split('\n')[0], block]))(
    'example starting with %s is a valid idgate configuration',
    (_first, block) => {
      const file = join(mkdtempSync(join(tmpdir(), 'idgate-docs-')), 'idgate.yaml');
      writeFileSync(file, block);
      expect(() => loadConfig({ file, env: {} })).not.toThrow();
    },
  );

  it.each(declarationFiles.map((block) => [block.split('\n')[0], block]))(
    'example starting with %s is a valid declarations file',
    async (_first, block) => {
      const file = join(mkdtempSync(join(tmpdir(), 'idgate-docs-')), 'declarations.yaml');
      writeFileSync(file, block);
      const { declarations } = await readDeclarationFiles([file]);
      expect(Object.values(declarations).flat().length).toBeGreaterThan(0);
    },
  );
});

describe('the CLI reference (docs/admin/cli.md)', () => {
  // Every plain code block of the page, so a command group may keep its lines in a block of its own.
  const section = readDoc('docs/admin/cli.md');
  const blocks = [...section.matchAll(/```\n([\s\S]*?)```/g)].map((match) => match[1] as string);
  const reference = blocks.flatMap((block) => block.split('\n').filter((line) => line.startsWith('idgate ')));
  const program = buildProgram(
    createContext({ stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: {} }),
  );

  it('documents every command and subcommand of the program', () => {
    expect(reference.length).toBeGreaterThan(0);
    const missing = commandPaths(program).filter((path) => !documents(reference, path));
    expect(
      missing.map((path) => `idgate ${path.join(' ')}`),
      `commands missing from the CLI reference, docs/admin/cli.md (add a line \`idgate <group> <command> …\`, or \`| <command> …\` on the group's line): ${missing.map((path) => `idgate ${path.join(' ')}`).join(', ')}`,
    ).toEqual([]);
  });

  it('gives every command a description and usage in its --help', () => {
    const flat = (text: string) => text.replace(/\s+/g, ' ').trim();
    const undescribed = commandPaths(program)
      .map((path) => ({ path, command: commandAt(program, path) }))
      .filter(({ path, command }) => {
        const help = flat(command.helpInformation());
        const description = flat(command.description());
        return (
          description === '' ||
          !help.includes(description) ||
          !help.startsWith(`Usage: idgate ${path.join(' ')}`)
        );
      })
      .map(({ path }) => `idgate ${path.join(' ')}`);
    expect(undescribed).toEqual([]);
  });

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
    // A group that also acts itself (`idgate audit [--user U] …`) documents its own options.
    const acting = named.length === 0 ? [group] : subcommands;
    const options = new Set(acting.flatMap((sub) => sub?.options.map((o) => o.long) ?? []));
    for (const option of line.match(/--[a-z-]+/g) ?? [])
      expect(options, `${line}: ${option}`).toContain(option);
  });
});

/** Every command's path below the program (`['users', 'add']`), groups included, depth first. */
function commandPaths(parent: Command, prefix: readonly string[] = []): string[][] {
  return parent.commands.flatMap((command) => {
    const path = [...prefix, command.name()];
    return [path, ...commandPaths(command, path)];
  });
}

function commandAt(program: Command, path: readonly string[]): Command {
  let command = program;
  for (const name of path) {
    const next = command.commands.find((c) => c.name() === name);
    if (next === undefined) throw new Error(`no command ${path.join(' ')}`);
    command = next;
  }
  return command;
}

/**
 * Whether a reference line names the command: `idgate users add …` names `users` and `users add`;
 * on a group's line every bare word after a `|` is a subcommand too (`idgate users list | disable <u>`).
 */
function documents(reference: readonly string[], path: readonly string[]): boolean {
  return reference.some((line) => {
    const words = line.split(/\s+/).slice(1);
    if (path.every((name, i) => words[i] === name)) return true;
    if (path.length !== 2 || words[0] !== path[0]) return false;
    return words.some((word, i) => i > 0 && words[i - 1] === '|' && word === path[1]);
  });
}
