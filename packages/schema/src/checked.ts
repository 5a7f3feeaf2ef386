import type * as z from 'zod/mini';

/**
 * `schema.check(...checks)` as a call a bundler may drop when its result is unused. zod/mini's own
 * factories are marked free of side effects, a method call is not: written as `.check()`, every
 * schema with a check would stay in a bundle that never uses it (the SDK's, for instance).
 */
// @__NO_SIDE_EFFECTS__
export function checked<T extends z.ZodMiniType>(
  schema: T,
  ...checks: Array<z.core.CheckFn<z.output<T>> | z.core.$ZodCheck<z.output<T>>>
): T {
  return schema.check(...checks);
}
