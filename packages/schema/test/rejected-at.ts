import { expect } from 'vitest';

type Issue = { code: string; path: ReadonlyArray<PropertyKey> };
type Schema = { safeParse(input: unknown): { success: boolean; error?: { issues: ReadonlyArray<Issue> } } };

/**
 * Asserts that `schema` rejects `input` and returns the dotted paths of the issues.
 * @example expect(rejectedAt(OAuthError, { error_description: 'x' })).toEqual(['error']);
 */
export function rejectedAt(schema: Schema, input: unknown): string[] {
  const result = schema.safeParse(input);
  expect(result.success).toBe(false);
  return (result.error?.issues ?? []).map((issue) => issue.path.map(String).join('.'));
}
