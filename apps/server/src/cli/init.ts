import { randomUUID } from 'node:crypto';
import { generateApiKey, generateSecret, hashSecret, StorageConflictError } from '@idgate/core';
import { InitResult, Username } from '@idgate/schema';
import type { Command } from 'commander';
import { type CliContext, CliError, parseField } from './context.js';
import { generateClientId, generatePassword } from './generate.js';

/** The group that marks idgate administrators. */
export const ADMIN_GROUP = 'idgate:admins';
const ALREADY_INITIALIZED = 'the database is already initialized';

export function registerInit(program: Command, ctx: CliContext): void {
  program
    .command('init')
    .description('set up an empty database: an admin user, an API key and a trusted client for the CLI')
    .option('--admin-username <username>', 'username of the admin user', 'admin')
    .option('--json', 'print the created credentials as JSON')
    .action(async (options: { adminUsername: string; json?: boolean }, command: Command) => {
      const username = parseField(Username, options.adminUsername, '--admin-username');
      await ctx.withServices(ctx.config(command), async (services) => {
        const { config, storage, hasher, clock } = services;
        // Slow or random work first, so the transaction stays short.
        const password = generatePassword();
        const passwordHash = await hasher.hash(password);
        const apiKey = await generateApiKey();
        const clientId = generateClientId();
        const clientSecret = generateSecret();
        const secretHash = await hashSecret(clientSecret);
        const now = new Date(clock.now());

        try {
          await storage.transaction(async (tx) => {
            if (
              (await tx.users.count()) > 0 ||
              (await tx.clients.count()) > 0 ||
              (await tx.apiKeys.count()) > 0
            ) {
              throw new CliError(ALREADY_INITIALIZED);
            }
            await tx.users.create({
              id: randomUUID(),
              username,
              email: null,
              displayName: null,
              groups: [ADMIN_GROUP],
              passwordHash,
              createdAt: now,
            });
            await tx.apiKeys.create({
              id: randomUUID(),
              name: 'init',
              prefix: apiKey.prefix,
              hash: apiKey.hash,
              scopes: ['tokenreview', 'admin'],
              createdAt: now,
              lastUsedAt: null,
              revokedAt: null,
            });
            await tx.clients.create({
              clientId,
              name: 'idgate-cli',
              secretHash,
              public: false,
              trusted: true,
              redirectUris: [],
              postLogoutRedirectUris: [],
              grantTypes: ['password', 'client_credentials', 'authorization_code', 'refresh_token'],
              scopes: ['openid', 'profile', 'email', 'groups', 'offline_access'],
              audiences: [],
              accessTokenTtl: config.tokens.accessTokenTtl,
              refreshTokenTtl: config.tokens.refreshTokenTtl,
              createdAt: now,
            });
          });
        } catch (error) {
          // A concurrent init that won the race shows up as a unique-key conflict.
          if (error instanceof StorageConflictError) throw new CliError(ALREADY_INITIALIZED);
          throw error;
        }

        const result = InitResult.parse({
          issuer: config.issuer,
          apiKey: apiKey.key,
          admin: { username, password },
          client: { client_id: clientId, client_secret: clientSecret },
        });
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
        ctx.out(`CLI client id:   ${result.client.client_id} (trusted, confidential)`);
        ctx.out(`Client secret:   ${result.client.client_secret}`);
      });
    });
}
