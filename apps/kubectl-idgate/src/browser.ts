import { spawn } from 'node:child_process';

/**
 * Whether this host can show a browser to the person: `BROWSER` names one, or a desktop session
 * on Linux, or macOS/Windows.
 */
export function canOpenBrowser(
  env: NodeJS.ProcessEnv,
  platform: NodeJS.Platform = process.platform,
): boolean {
  if (browserCommands(env, platform).length > 0) return true;
  if (platform === 'darwin' || platform === 'win32') return true;
  return Boolean(env.DISPLAY || env.WAYLAND_DISPLAY);
}

/**
 * The commands of `BROWSER`, as Python's `webbrowser` and `xdg-open` read it: a list separated by
 * the platform's PATH separator, each a command with its arguments separated by spaces, in which
 * `%s` stands for the URL (appended when absent).
 */
export function browserCommands(
  env: NodeJS.ProcessEnv,
  platform: NodeJS.Platform = process.platform,
): string[][] {
  return (env.BROWSER ?? '')
    .split(platform === 'win32' ? ';' : ':')
    .map((entry) => entry.trim().split(/\s+/).filter(Boolean))
    .filter((words) => words.length > 0);
}

/**
 * Asks `BROWSER`, else the desktop, to open `url`; a command that cannot be started passes to the
 * next of `BROWSER`; a failure is silent (the URL is printed anyway).
 */
export function openBrowser(
  url: string,
  platform: NodeJS.Platform = process.platform,
  env: NodeJS.ProcessEnv = process.env,
): void {
  const fromEnv = browserCommands(env, platform).map((words) =>
    words.some((word) => word.includes('%s'))
      ? words.map((word) => word.replaceAll('%s', url))
      : [...words, url],
  );
  const system =
    platform === 'darwin'
      ? ['open', url]
      : platform === 'win32'
        ? ['rundll32', 'url.dll,FileProtocolHandler', url]
        : ['xdg-open', url];
  tryInTurn(fromEnv.length > 0 ? fromEnv : [system]);
}

function tryInTurn(commands: string[][]): void {
  const [first, ...rest] = commands;
  if (first === undefined) return; // no opener could start: the person follows the printed URL
  const [command, ...args] = first as [string, ...string[]];
  try {
    const child = spawn(command, args, { detached: true, stdio: 'ignore' });
    child.on('error', () => tryInTurn(rest));
    child.unref();
  } catch {
    tryInTurn(rest);
  }
}
