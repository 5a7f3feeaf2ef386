import type { Storage } from '@idgate/core';

/** Whether `init` (or anything else) has put users, clients or API keys in the database yet. */
export async function isInitialized(
  storage: Pick<Storage, 'users' | 'clients' | 'apiKeys'>,
): Promise<boolean> {
  return (
    (await storage.users.count()) > 0 ||
    (await storage.clients.count()) > 0 ||
    (await storage.apiKeys.count()) > 0
  );
}

/** What to do next on an empty database, in one sentence: the start-up log says it. */
export const NEXT_STEP_ON_EMPTY =
  'the database holds no users, clients or API keys yet: run `idgate init` (`pnpm -s idgate init` in a checkout) for the first admin user, API key and client, or `pnpm demo` for a demo user and an example application';

/**
 * The lines a person starting `idgate serve` in a terminal reads (on stderr, beside the JSON log
 * on stdout): where the server is, what to open, and, on an empty database, what to do next.
 * @example startBanner({ address: 'http://0.0.0.0:8080', issuer: 'http://localhost:8080/oauth', initialized: false })
 */
export function startBanner(options: {
  address: string;
  issuer: string;
  initialized: boolean;
  warnings?: readonly string[];
}): string {
  const base = new URL(options.issuer).origin;
  const lines = [
    '',
    `idgate is listening on ${options.address}`,
    `  this server:  ${base}/`,
    `  issuer:       ${options.issuer}`,
    `  discovery:    ${options.issuer}/.well-known/openid-configuration`,
    `  health:       ${base}/readyz`,
    '',
  ];
  for (const warning of options.warnings ?? []) lines.push(`Warning: ${warning}.`, '');
  if (!options.initialized)
    lines.push(
      'Next: the database is empty. In another terminal run',
      '  pnpm -s idgate init        the first admin user, API key and client (secrets printed once)',
      'or stop this server and run',
      '  pnpm demo                  a demo user, a cluster and an example application to sign in to',
      '',
    );
  lines.push('Logs follow as JSON lines on stdout. Documentation: docs/getting-started.md.', '');
  return lines.join('\n');
}
