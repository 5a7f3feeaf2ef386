import { execFileSync } from 'node:child_process';
import { copyFile, mkdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parsePluginArgs } from '../src/args.js';
import { KUBECTL } from './helpers/kubectl.js';
import { PLUGIN_BIN, runProgram, tempDir } from './helpers/plugin.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const PACKAGE = fileURLToPath(new URL('..', import.meta.url));
/** What `pnpm install` at the root puts on the PATH of `pnpm exec` and of every package script. */
const ROOT_BIN = join(ROOT, 'node_modules', '.bin');
const onPath = { PATH: `${ROOT_BIN}:${process.env.PATH ?? '/usr/bin:/bin'}` };

const isExecutable = async (path: string) => ((await stat(path)).mode & 0o111) === 0o111;

describe('kubectl-idgate from a checkout', () => {
  it('pnpm install at the root links an executable kubectl-idgate into node_modules/.bin', async () => {
    const root = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8'));
    expect(root.devDependencies['@idgate/kubectl']).toBe('workspace:*');
    const manifest = JSON.parse(await readFile(join(PACKAGE, 'package.json'), 'utf8'));
    expect(manifest.bin).toEqual({ 'kubectl-idgate': './bin/kubectl-idgate.js' });
    expect(manifest.files).toContain('bin');
    // the file the link runs is in Git, executable, so the link exists before anything is built
    const staged = execFileSync('git', ['ls-files', '--stage', 'bin/kubectl-idgate.js'], {
      cwd: PACKAGE,
      encoding: 'utf8',
    });
    expect(staged).toMatch(/^100755 /);
    expect(await isExecutable(join(PACKAGE, 'bin', 'kubectl-idgate.js'))).toBe(true);
    expect(await isExecutable(join(ROOT_BIN, 'kubectl-idgate'))).toBe(true);
    const version = await runProgram('kubectl-idgate', ['--version'], { env: onPath });
    expect(version).toEqual({ code: 0, stdout: `${manifest.version}\n`, stderr: '' });
  });

  it('the built plugin has a shebang and mode 755', async () => {
    expect(await readFile(PLUGIN_BIN, 'utf8')).toMatch(/^#!\/usr\/bin\/env node\n/);
    expect((await stat(PLUGIN_BIN)).mode & 0o777).toBe(0o755);
  });

  it('in a checkout not built yet, the command says how to build it', async () => {
    const checkout = await tempDir('unbuilt');
    const bin = join(checkout, 'apps', 'kubectl-idgate', 'bin');
    await mkdir(bin, { recursive: true });
    await copyFile(join(PACKAGE, 'bin', 'kubectl-idgate.js'), join(bin, 'kubectl-idgate.js'));
    const result = await runProgram(process.execPath, [join(bin, 'kubectl-idgate.js'), '--help']);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `kubectl-idgate: the plugin is not built (${join(checkout, 'apps', 'kubectl-idgate', 'dist', 'bin.js')} is missing): run \`pnpm build\` in ${checkout}\n`,
    );
  });
});

const COMMANDS = ['get-token', 'setup', 'logout'] as const;

describe('kubectl-idgate --help', () => {
  it.each(
    [
      ['--help'],
      ['-h'],
      ['help'],
      ...COMMANDS.flatMap((command) => [
        [command, '--help'],
        [command, '-h'],
        ['help', command],
      ]),
      // asked for help, the rest of the line does not matter
      ['get-token', '--issuer', 'not a url', '--help'],
    ].map((args) => [args.join(' '), args] as const),
  )('kubectl-idgate %s answers on stdout with exit 0', async (_, args) => {
    const result = await runProgram('kubectl-idgate', args, { env: onPath });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Usage:\n/);
    const command = COMMANDS.find((name) => args.includes(name));
    if (command === undefined)
      for (const name of COMMANDS) expect(result.stdout).toContain(`kubectl-idgate ${name} `);
    else expect(result.stdout).toContain(`kubectl-idgate ${command} `);
  });

  it.each(COMMANDS)('every option the help of %s names is one it takes', async (command) => {
    const { stdout } = await runProgram('kubectl-idgate', [command, '--help'], { env: onPath });
    const options = [...stdout.slice(stdout.indexOf('Options:')).matchAll(/^ {2}(--[a-z-]+)/gm)].map(
      (match) => match[1] as string,
    );
    expect(options.length).toBeGreaterThan(3);
    for (const option of options) {
      let message = '';
      try {
        parsePluginArgs([command, option, 'x']);
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message, option).not.toMatch(/Unknown option/);
    }
    // and an option it does not take is refused by name
    expect(() => parsePluginArgs([command, '--no-such-option'])).toThrow(/Unknown option '--no-such-option'/);
  });

  it('a bare kubectl-idgate prints the usage on stderr (nothing on stdout), exit 0', async () => {
    const result = await runProgram('kubectl-idgate', [], { env: onPath });
    expect(result).toMatchObject({ code: 0, stdout: '' });
    expect(result.stderr).toMatch(/^Usage:\n/);
  });

  it.skipIf(KUBECTL === undefined).each(COMMANDS)(
    'kubectl idgate %s --help finds the plugin on the PATH and exits 0',
    async (command) => {
      const result = await runProgram(KUBECTL as string, ['idgate', command, '--help'], { env: onPath });
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(result.stdout).toContain(`kubectl-idgate ${command} `);
    },
  );
});
