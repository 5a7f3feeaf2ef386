import { spawn } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { endsWithTest } from '../../../server/test/helpers/child-processes.js';

/** The built plugin (run `pnpm --filter @idgate/kubectl build` first; turbo's `test` does). */
export const PLUGIN_BIN = fileURLToPath(new URL('../../dist/bin.js', import.meta.url));

export interface PluginRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `kubectl-idgate` in a child process as kubectl would, with only the environment given (no
 * DISPLAY: no browser to open). `onStderrLine` sees each line of stderr as it comes, so a test can
 * act on a printed URL like a person would. A plugin still running when the test ends (it failed
 * or timed out waiting for a sign-in) is killed.
 */
export function runPlugin(
  args: string[],
  options: { env?: Record<string, string>; onStderrLine?: (line: string) => void } = {},
): Promise<PluginRun> {
  return runProgram(process.execPath, [PLUGIN_BIN, ...args], options);
}

/** Runs `file` (looked up on the PATH given, when it has no slash) as {@link runPlugin} runs the plugin. */
export function runProgram(
  file: string,
  args: string[],
  options: { env?: Record<string, string>; onStderrLine?: (line: string) => void } = {},
): Promise<PluginRun> {
  return new Promise((resolve, reject) => {
    const env = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? '/tmp',
      ...options.env,
    };
    const child = endsWithTest(
      spawn(file, args, {
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    let stdout = '';
    let stderr = '';
    let pending = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      stderr += text;
      pending += text;
      let newline = pending.indexOf('\n');
      while (newline !== -1) {
        options.onStderrLine?.(pending.slice(0, newline));
        pending = pending.slice(newline + 1);
        newline = pending.indexOf('\n');
      }
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

export function tempDir(prefix: string): Promise<string> {
  return mkdtemp(join(tmpdir(), `kubectl-idgate-${prefix}-`));
}

/** The first http(s) URL in a line, if any. */
export function urlIn(line: string): string | undefined {
  return /https?:\/\/\S+/.exec(line)?.[0];
}
