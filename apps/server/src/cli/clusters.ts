import { readFile } from 'node:fs/promises';
import {
  addCluster,
  clusterAuthenticationConfiguration,
  getCluster,
  issueClusterApiKey,
  KUBERNETES_JWT_ALGORITHMS,
  listClusters,
  removeCluster,
  updateCluster,
  webhookKubeconfig,
} from '@idgate/core/admin';
import type { SigningAlgorithm } from '@idgate/schema';
import type { Command } from 'commander';
import { type CliContext, CliError, optionLabels, table, when } from './context.js';

const CLUSTER_OPTIONS = optionLabels({ name: 'NAME', audience: '--audience', requireMfa: '--require-mfa' });
const UPDATE_OPTIONS = optionLabels({
  name: '--name',
  audience: '--audience',
  requireMfa: '--require-mfa',
});
const REQUIRE_MFA_HELP =
  'tokens for the cluster need a sign-in with a second factor (acr urn:idgate:acr:mfa): idgate refuses to issue others, TokenReview refuses them, and --authentication-config gets a rule on acr';

interface ShowOptions {
  json?: boolean;
  webhookKubeconfig?: boolean;
  authenticationConfig?: boolean;
  certificateAuthority?: string;
  discoveryUrl?: string;
}

export function registerClusters(program: Command, ctx: CliContext): void {
  const clusters = program
    .command('clusters')
    .description('manage Kubernetes clusters (audiences, TokenReview keys, the kubectl client)');

  clusters
    .command('add')
    .description(
      'register a cluster: its audience, a tokenreview API key bound to it (printed once) and the shared kubectl client',
    )
    .argument('<name>', 'the cluster name (letters, digits and -)')
    .option('--audience <audience>', 'the audience of its tokens (default: kubernetes:<name>)')
    .option('--require-mfa', REQUIRE_MFA_HELP)
    .option('--json', 'print the cluster and its key as JSON')
    .action(
      async (
        name: string,
        options: { audience?: string; requireMfa?: boolean; json?: boolean },
        command: Command,
      ) => {
        await ctx.withAdmin(ctx.config(command), async (admin) => {
          const input = {
            name,
            ...(options.audience === undefined ? {} : { audience: options.audience }),
            ...(options.requireMfa === true ? { requireMfa: true } : {}),
          };
          const created = await addCluster(admin, input, { label: CLUSTER_OPTIONS });
          if (options.json) {
            ctx.json(created);
            return;
          }
          const { cluster } = created;
          ctx.out(`registered cluster ${cluster.name}`);
          ctx.out(`audience: ${cluster.audience}`);
          ctx.out(
            `kubectl client: ${cluster.kubectlClientId}${created.kubectlClientCreated ? ' (created; shared by every cluster)' : ''}`,
          );
          ctx.out(`tokenreview API key: ${created.apiKey}  (shown only once; bound to this cluster)`);
          ctx.out(`require MFA: ${cluster.requireMfa ? 'yes' : 'no'}`);
        });
      },
    );

  clusters
    .command('list')
    .description('list clusters')
    .option('--json', 'print a JSON array')
    .action(async (options: { json?: boolean }, command: Command) => {
      await ctx.withAdmin(ctx.config(command), async (admin) => {
        const all = await listClusters(admin);
        if (options.json) {
          ctx.json(all);
          return;
        }
        if (all.length === 0) {
          ctx.out('no clusters');
          return;
        }
        ctx.out(
          table(
            ['NAME', 'AUDIENCE', 'MFA', 'KUBECTL_CLIENT', 'CREATED'],
            all.map((c) => [
              c.name,
              c.audience,
              c.requireMfa ? 'required' : '-',
              c.kubectlClientId ?? '-',
              when(new Date(c.createdAt)),
            ]),
          ),
        );
      });
    });

  clusters
    .command('show')
    .description(
      'show a cluster, or the kube-apiserver configuration for it (--webhook-kubeconfig mints a new bound API key)',
    )
    .argument('<name>')
    .option('--json', 'print the cluster as JSON')
    .option(
      '--webhook-kubeconfig',
      'print the webhook token authenticator kubeconfig, with a new API key bound to the cluster',
    )
    .option(
      '--certificate-authority <file>',
      "with --webhook-kubeconfig or --authentication-config: embed this PEM CA of idgate's certificate",
    )
    .option(
      '--authentication-config',
      'print a Kubernetes AuthenticationConfiguration (structured JWT authentication)',
    )
    .option('--discovery-url <url>', 'with --authentication-config: where the API server fetches discovery')
    .action(async (name: string, options: ShowOptions, command: Command) => {
      if (options.webhookKubeconfig && options.authenticationConfig)
        throw new CliError('choose one of --webhook-kubeconfig and --authentication-config');
      if (
        options.certificateAuthority !== undefined &&
        !options.webhookKubeconfig &&
        !options.authenticationConfig
      )
        throw new CliError(
          '--certificate-authority goes with --webhook-kubeconfig or --authentication-config',
        );
      if (options.discoveryUrl !== undefined && !options.authenticationConfig)
        throw new CliError('--discovery-url goes with --authentication-config');
      const config = ctx.config(command);
      const authority =
        options.certificateAuthority === undefined
          ? undefined
          : await readCertificate(options.certificateAuthority);
      await ctx.withAdmin(config, async (admin, services) => {
        if (options.authenticationConfig) {
          const cluster = await getCluster(admin, name);
          const algorithm = await signingAlgorithm(config.signing.algorithm, services.storage);
          const document = clusterAuthenticationConfiguration(cluster, {
            issuer: config.issuer,
            algorithm,
            ...(options.discoveryUrl === undefined ? {} : { discoveryUrl: options.discoveryUrl }),
            // Kubernetes reads the PEM itself here, where a kubeconfig wants it base64
            ...(authority === undefined ? {} : { certificateAuthority: authority }),
          });
          ctx.io.stdout.write(await toYaml(document));
          return;
        }
        if (options.webhookKubeconfig) {
          const { cluster, record, key } = await issueClusterApiKey(admin, name);
          ctx.note(
            `created API key ${record.prefix} (id ${record.id}) bound to cluster ${cluster.name} for this kubeconfig; ` +
              'older keys stay valid until `idgate api-keys revoke`',
          );
          if (!config.issuer.startsWith('https://'))
            ctx.note(
              `warning: the issuer ${config.issuer} is not https: the API key would travel in the clear`,
            );
          const document = webhookKubeconfig({
            issuer: config.issuer,
            cluster: cluster.name,
            apiKey: key,
            ...(authority === undefined
              ? {}
              : { certificateAuthorityData: Buffer.from(authority).toString('base64') }),
          });
          ctx.io.stdout.write(await toYaml(document));
          return;
        }
        const cluster = await getCluster(admin, name);
        if (options.json) {
          ctx.json(cluster);
          return;
        }
        ctx.out(`name: ${cluster.name}`);
        ctx.out(`audience: ${cluster.audience}`);
        ctx.out(`require MFA: ${cluster.requireMfa ? 'yes' : 'no'}`);
        ctx.out(`kubectl client: ${cluster.kubectlClientId ?? '-'}`);
        ctx.out(`created: ${cluster.createdAt}`);
      });
    });

  clusters
    .command('update')
    .description(
      'rename a cluster, change its audience or whether it requires a second factor; its API keys stay valid and follow it (TokenReview answers for the new audience)',
    )
    .argument('<name>')
    .option('--name <new>', 'the new name')
    .option('--audience <audience>', 'the new audience of its tokens')
    .option('--require-mfa', REQUIRE_MFA_HELP)
    .option('--no-require-mfa', 'stop requiring a second factor for its tokens')
    .option('--json', 'print the cluster as JSON')
    .action(
      async (
        name: string,
        options: { name?: string; audience?: string; requireMfa?: boolean; json?: boolean },
        command: Command,
      ) => {
        if (options.name === undefined && options.audience === undefined && options.requireMfa === undefined)
          throw new CliError('give --name, --audience, --require-mfa or --no-require-mfa');
        await ctx.withAdmin(ctx.config(command), async (admin) => {
          const input = {
            ...(options.name === undefined ? {} : { name: options.name }),
            ...(options.audience === undefined ? {} : { audience: options.audience }),
            ...(options.requireMfa === undefined ? {} : { requireMfa: options.requireMfa }),
          };
          const cluster = await updateCluster(admin, name, input, { label: UPDATE_OPTIONS });
          if (options.json) {
            ctx.json(cluster);
            return;
          }
          ctx.out(`updated cluster ${cluster.name}`);
          ctx.out(`audience: ${cluster.audience}`);
          ctx.out(`require MFA: ${cluster.requireMfa ? 'yes' : 'no'}`);
          ctx.out(
            'its API keys follow it; print the new configuration with `idgate clusters show --authentication-config` where the API server verifies JWTs itself',
          );
        });
      },
    );

  clusters
    .command('remove')
    .description("remove a cluster: its API keys are revoked and kubectl's client loses its audience")
    .argument('<name>')
    .option('--json', 'print what was removed as JSON')
    .action(async (name: string, options: { json?: boolean }, command: Command) => {
      await ctx.withAdmin(ctx.config(command), async (admin) => {
        const removed = await removeCluster(admin, name);
        if (options.json) {
          ctx.json(removed);
          return;
        }
        ctx.out(`cluster ${removed.name} removed (${removed.revokedApiKeys} API key(s) revoked)`);
      });
    });
}

/** A PEM file's content, checked to hold a certificate. */
async function readCertificate(file: string): Promise<string> {
  let pem: string;
  try {
    pem = await readFile(file, 'utf8');
  } catch (error) {
    throw new CliError(
      `cannot read --certificate-authority ${file}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`,
    );
  }
  if (!pem.includes('-----BEGIN CERTIFICATE-----'))
    throw new CliError(`--certificate-authority ${file} holds no PEM certificate`);
  return pem;
}

/**
 * The algorithm Kubernetes would have to verify: the configured one, unless a key of another
 * algorithm still signs (the configuration changed, no rotation yet).
 */
async function signingAlgorithm(
  configured: SigningAlgorithm,
  storage: { signingKeys: { list(): Promise<Array<{ alg: SigningAlgorithm; retiredAt: Date | null }>> } },
): Promise<SigningAlgorithm> {
  const active = (await storage.signingKeys.list()).find((key) => key.retiredAt === null);
  if (active !== undefined && !KUBERNETES_JWT_ALGORITHMS.includes(active.alg)) return active.alg;
  if (!KUBERNETES_JWT_ALGORITHMS.includes(configured)) return configured;
  return active?.alg ?? configured;
}

/** YAML for kubeconfig and AuthenticationConfiguration documents; the parser loads only here. */
async function toYaml(document: unknown): Promise<string> {
  const { stringify } = await import('yaml');
  return stringify(document);
}
