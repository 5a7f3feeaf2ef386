import { applyDeclarations } from '@idgate/core/admin';
import { ApplyDeclarationsInput, ApplyResult } from '@idgate/schema';
import type { FastifyInstance } from 'fastify';
import { nodeSecretReader } from '../../declarations.js';
import { adminScope } from './scope.js';

/** Secrets by reference over the admin API: only the server's variables named so, never its files. */
export const DECLARED_ENV_PREFIX = 'IDGATE_DECLARED_';

/**
 * The admin REST API of declarations (`idgate apply` over HTTP): `POST /admin/v1/declarations/apply`
 * plans, and unless `dryRun` applies, a set of declared objects. Besides `declarations:apply`, the
 * key needs the scope that changes (for a dry run: reads) each kind the plan touches.
 */
export async function adminDeclarationRoutes(app: FastifyInstance): Promise<void> {
  const { route } = adminScope(app, 'declarations');
  const readSecret = nodeSecretReader({ env: process.env, envPrefix: DECLARED_ENV_PREFIX, files: false });

  app.post(
    '/admin/v1/declarations/apply',
    route(
      {
        operationId: 'applyDeclarations',
        scope: 'declarations:apply',
        summary: 'Apply declared objects (or plan it)',
        description:
          "Makes storage hold the declared clients, clusters, trusts, groups, identity providers, users and API keys, as `idgate apply -f` does: each object is created, updated (put back when changed by hand: `drift`) or left alone; with `prune`, objects this `manager` declared before and no longer does are deleted; with `dryRun`, nothing changes and the answer is the plan. Secrets are references: over this API only to the server's environment variables named `IDGATE_DECLARED_*`. The key needs, besides `declarations:apply`, the write scope of every kind the plan touches (the read scope for a dry run), and every scope a declared API key would have. Objects of another manager are refused (409 `declaration_conflict`).",
        tags: ['declarations'],
        body: { json: ApplyDeclarationsInput },
        responses: {
          200: { description: 'the plan, carried out unless `dryRun`', json: ApplyResult },
          400: {
            description: 'a bad declaration or secret reference, named',
            problem: ['invalid_declarations', 'invalid_client', 'invalid_user', 'invalid_identity_provider'],
          },
          409: {
            description: 'an object another manager owns, or a taken name or audience',
            problem: ['declaration_conflict', 'conflict', 'client_exists', 'cluster_exists', 'user_exists'],
          },
        },
      },
      { json: 'declarations' },
      ({ body }, request) =>
        applyDeclarations({ ...request.admin, readSecret }, body.declarations, {
          manager: body.manager,
          dryRun: body.dryRun,
          prune: body.prune,
        }),
    ),
  );
}
