import { existsSync, writeFileSync } from 'node:fs';
import {
  ADMIN_GROUP,
  type AdminPorts,
  addCluster,
  createClient,
  createUser,
  initializeStorage,
} from '@idgate/core/admin';
import { InitResult, RedirectUri, Username } from '@idgate/schema';
import type { Command } from 'commander';
import { type CliContext, CliError, parseField } from './context.js';

/** The demo's names: one user, one cluster, one web application (examples/web). */
const DEMO_USER = 'demo';
const DEMO_CLUSTER = 'demo';
const DEMO_CLIENT = 'Example app';

export function registerInit(program: Command, ctx: CliContext): void {
  program
    .command('init')
    .description('set up an empty database: an admin user, an API key and a trusted client for the CLI')
    .option('--admin-username <username>', 'username of the admin user', 'admin')
    .option(
      '--demo',
      'also create a demo user, a cluster and a client for the example application (examples/web)',
    )
    .option('--app-url <url>', "with --demo: the example application's address", 'http://localhost:3000')
    .option(
      '--app-env <path>',
      "with --demo: write the example application's settings to this new file (mode 600)",
    )
    .option('--json', 'print the created credentials as JSON')
    .action(
      async (
        options: { adminUsername: string; demo?: boolean; appUrl: string; appEnv?: string; json?: boolean },
        command: Command,
      ) => {
        const adminUsername = parseField(Username, options.adminUsername, '--admin-username');
        if (!options.demo && options.appEnv !== undefined) throw new CliError('--app-env needs --demo', 2);
        const appUrl = checkedUrl(options.appUrl);
        const redirectUri = parseField(RedirectUri, new URL('/callback', appUrl).href, '--app-url');
        if (options.appEnv !== undefined && existsSync(options.appEnv))
          throw new CliError(`${options.appEnv} exists already: choose another --app-env or remove it`, 2);
        await ctx.withAdmin(
          ctx.config(command),
          async (admin, { config }) => {
            const created = await initializeStorage(admin, { adminUsername });
            const result = InitResult.parse({
              issuer: config.issuer,
              apiKey: created.apiKey.key,
              admin: { username: created.admin.user.username, password: created.admin.password },
              client: { clientId: created.client.client.clientId, clientSecret: created.client.clientSecret },
              ...(options.demo ? { demo: await createDemo(admin, appUrl.origin, redirectUri) } : {}),
            });
            if (result.demo !== undefined && options.appEnv !== undefined)
              writeFileSync(options.appEnv, demoEnv(result), { mode: 0o600, flag: 'wx' });
            if (options.json) {
              ctx.json(result);
              return;
            }
            ctx.out('idgate is initialized. The secrets below are shown only once: store them now.');
            ctx.out();
            ctx.out(`Issuer:          ${result.issuer}`);
            ctx.out(`Admin user:      ${result.admin.username} (group ${ADMIN_GROUP})`);
            ctx.out(`Admin password:  ${result.admin.password}`);
            ctx.out(`API key:         ${result.apiKey} (scopes: tokenreview, admin)`);
            ctx.out(`CLI client id:   ${result.client.clientId} (trusted, confidential)`);
            ctx.out(`Client secret:   ${result.client.clientSecret}`);
            if (result.demo === undefined) return;
            const { demo } = result;
            ctx.out();
            ctx.out(`Demo user:       ${demo.user.username}, password ${demo.user.password}`);
            ctx.out(`Demo cluster:    ${demo.cluster.name} (audience ${demo.cluster.audience})`);
            ctx.out(`  its API key:   ${demo.cluster.apiKey} (tokenreview, for this cluster only)`);
            ctx.out(
              `Example app:     client ${demo.client.clientId}, redirect URI ${demo.client.redirectUri}`,
            );
            ctx.out(`  its secret:    ${demo.client.clientSecret}`);
            ctx.out();
            if (options.appEnv === undefined) {
              ctx.out('Start the example application with these settings (or rerun with --app-env FILE):');
              ctx.out(`  ${appSettings(result).join(' ')} node examples/web/server.mjs`);
            } else {
              ctx.out(
                `Start the example application: node --env-file=${options.appEnv} examples/web/server.mjs`,
              );
            }
            ctx.out(`then open ${demo.appUrl} and sign in as ${demo.user.username}.`);
          },
          { create: true },
        );
      },
    );
}

/** `value` as a URL, or a usage error naming --app-url. */
function checkedUrl(value: string): URL {
  try {
    return new URL(value);
  } catch {
    throw new CliError(`--app-url: not an absolute URL: ${value}`, 2);
  }
}

/**
 * The demo's objects: a user in group `developers`, a cluster (with its TokenReview key), and a
 * confidential web client whose access tokens are for that cluster.
 */
async function createDemo(admin: AdminPorts, appUrl: string, redirectUri: string) {
  const user = await createUser(admin, {
    username: DEMO_USER,
    email: null,
    displayName: 'Demo User',
    groups: ['developers'],
  });
  const cluster = await addCluster(admin, { name: DEMO_CLUSTER });
  const client = await createClient(admin, {
    name: DEMO_CLIENT,
    redirectUris: [redirectUri],
    postLogoutRedirectUris: [`${appUrl}/`],
    grantTypes: ['authorization_code', 'refresh_token'],
    scopes: ['openid', 'profile', 'email', 'groups', 'offline_access'],
    audiences: [cluster.cluster.audience],
  });
  return {
    appUrl,
    user: { username: user.user.username, password: user.generatedPassword as string },
    client: { clientId: client.clientId, clientSecret: client.clientSecret as string, redirectUri },
    cluster: { name: cluster.cluster.name, audience: cluster.cluster.audience, apiKey: cluster.apiKey },
  };
}

/** What the example application reads from its environment, as `NAME=value`. */
function appSettings(result: InitResult): string[] {
  const demo = result.demo as NonNullable<InitResult['demo']>;
  return [
    `IDGATE_ISSUER=${result.issuer}`,
    `DEMO_APP_URL=${demo.appUrl}`,
    `DEMO_CLIENT_ID=${demo.client.clientId}`,
    `DEMO_CLIENT_SECRET=${demo.client.clientSecret}`,
    `DEMO_TOKENREVIEW_KEY=${demo.cluster.apiKey}`,
  ];
}

/** The example application's settings, and who signs in, as a file for `node --env-file`. */
function demoEnv(result: InitResult): string {
  const demo = result.demo as NonNullable<InitResult['demo']>;
  return [
    '# Written by idgate init --demo for examples/web. It holds secrets: keep it private.',
    ...appSettings(result),
    '# Who signs in (the example application does not read these; `pnpm demo` prints them).',
    `DEMO_USERNAME=${demo.user.username}`,
    `DEMO_PASSWORD=${demo.user.password}`,
    '',
  ].join('\n');
}
