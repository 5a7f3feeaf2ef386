import { API_KEY_ROLES, type ApiKeyRole, ApiKeyScope } from '@idgate/schema';

/**
 * Whether a key carrying `scopes` holds `scope`: it carries it, or — for a scope of the admin
 * API — it carries `admin`, which holds every one of them. `tokenreview` and `admin` are held only
 * by carrying them. A lookup or two in the key's few scopes: TokenReview checks each request so.
 * @example holdsScope(['admin'], 'users:read') // true
 * @example holdsScope(['admin'], 'tokenreview') // false
 */
export function holdsScope(scopes: readonly ApiKeyScope[], scope: ApiKeyScope): boolean {
  return scopes.includes(scope) || (scope !== 'tokenreview' && scope !== 'admin' && scopes.includes('admin'));
}

/**
 * The first of `wanted` that a key carrying `held` does not hold (see {@link holdsScope}), or
 * undefined when it holds them all.
 * @example missingScope(['users:read'], ['users:read', 'users:write']) // 'users:write'
 */
export function missingScope(
  held: readonly ApiKeyScope[],
  wanted: readonly ApiKeyScope[],
): ApiKeyScope | undefined {
  return wanted.find((scope) => !holdsScope(held, scope));
}

/**
 * The scopes a key made of `scopes` and `roles` carries: each once, in the order of
 * {@link ApiKeyScope}, without the admin API's scopes when `admin` (which holds them) is among them.
 * @example apiKeyScopes({ scopes: ['tokenreview'], roles: ['helpdesk'] }) // ['tokenreview', 'users:read', 'users:unlock', …]
 */
export function apiKeyScopes(input: {
  readonly scopes?: readonly ApiKeyScope[] | undefined;
  readonly roles?: readonly ApiKeyRole[] | undefined;
}): ApiKeyScope[] {
  const given = new Set<ApiKeyScope>(input.scopes ?? []);
  for (const role of input.roles ?? []) for (const scope of API_KEY_ROLES[role]) given.add(scope);
  const admin = given.has('admin');
  return ApiKeyScope.options.filter(
    (scope) => given.has(scope) && (!admin || scope === 'admin' || scope === 'tokenreview'),
  );
}
