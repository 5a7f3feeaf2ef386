import type { TestIssuer } from './issuer.js';
import { type PluginRun, runPlugin, urlIn } from './plugin.js';

/**
 * Runs `kubectl-idgate` with `args`; when it prints an authorization URL (the loopback sign-in with
 * --no-browser), follows it through the provider like a browser would.
 */
export async function runWithBrowser(
  idp: TestIssuer,
  args: string[],
  env: Record<string, string> = {},
): Promise<PluginRun> {
  let followed: Promise<Response> | undefined;
  const result = await runPlugin(args, {
    env,
    onStderrLine: (line) => {
      const url = urlIn(line);
      if (url?.includes('code_challenge=') && followed === undefined) followed = idp.followAuthorization(url);
    },
  });
  await followed;
  return result;
}
