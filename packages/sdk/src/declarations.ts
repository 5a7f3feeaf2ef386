import { ApplyResult, type Declarations } from '@idgate/schema';
import { ADMIN_CALL, jsonBody } from './admin-http.js';
import { IncidentMethods } from './incident.js';

/** How {@link IdgateDeclarationMethods.applyDeclarations} plans and applies. */
export interface ApplyDeclarationsOptions {
  /** Only plan: nothing changes (needs the kinds' read scopes, not their write scopes). */
  dryRun?: boolean;
  /** Delete objects this manager declared before and `declarations` no longer does. */
  prune?: boolean;
  /** Who owns the declared objects (default `apply`); another manager's are refused with a 409. */
  manager?: string;
}

/**
 * The method of {@link IdgateAdminClient} for objects declared in files, as `idgate apply -f` does.
 * @example
 * const plan = await admin.applyDeclarations({ clusters: [{ name: 'prod' }] }, { dryRun: true });
 */
export interface IdgateDeclarationMethods {
  /**
   * `POST /admin/v1/declarations/apply` (scope `declarations:apply`, plus the write scope — for a
   * dry run the read scope — of every kind the plan touches): makes the server hold the declared
   * clients, clusters, trusts, groups, identity providers, users and API keys, and answers each object's step
   * (`create`, `update`, `delete`, `unchanged`; `drift` when changed by hand). Secrets are
   * references to the server's environment variables named `IDGATE_DECLARED_*`. Never retried.
   * @example const { summary } = await admin.applyDeclarations(declarations, { prune: true });
   */
  applyDeclarations(
    declarations: Partial<Declarations> | Record<string, unknown>,
    options?: ApplyDeclarationsOptions,
  ): Promise<ApplyResult>;
}

/** The declarations method of the admin client; its class extends this one. */
export class DeclarationMethods extends IncidentMethods implements IdgateDeclarationMethods {
  applyDeclarations(
    declarations: Partial<Declarations> | Record<string, unknown>,
    options: ApplyDeclarationsOptions = {},
  ): Promise<ApplyResult> {
    const endpoint = 'POST /admin/v1/declarations/apply';
    const body: Record<string, unknown> = { declarations };
    for (const field of ['dryRun', 'prune', 'manager'] as const)
      if (options[field] !== undefined) body[field] = options[field];
    return this[ADMIN_CALL]({
      method: 'POST',
      path: 'admin/v1/declarations/apply',
      headers: { 'content-type': 'application/json' },
      body: jsonBody(body, endpoint),
      schema: ApplyResult,
      schemaName: 'ApplyResult',
      retry: 0,
    });
  }
}
