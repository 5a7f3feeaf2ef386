import type * as z from 'zod/mini';

/** How {@link describeFirstIssue} words an issue. */
export interface DescribeIssueOptions {
  /**
   * What the reader calls a field, given its dotted path without array positions (`''` is the
   * whole input). By default the path itself, or `input` for the whole input.
   */
  label?: (path: string) => string;
  /**
   * The value that was parsed. With it a missing field reads `… is required`, and the text or
   * number at fault is quoted after the field's label, unless it is blank, longer than 100
   * characters, or a secret. Without it the issue's own `input` (`reportInput: true`) is used.
   */
  input?: unknown;
  /** Field names whose values are never quoted. */
  secrets?: readonly string[];
  /** Added after `is required`, as in `--issuer is required for --type oidc`. */
  requiredContext?: string;
  /** Words every problem but a missing field `… is not valid`: no value, no zod message. */
  terse?: boolean;
  /**
   * Keeps array positions in the path (`spec.audiences.0`): for a JSON document a program wrote,
   * where the position finds the culprit. Left out by default (`scopes`): a person typed the list.
   */
  positions?: boolean;
}

const MAX_QUOTED = 100;

/**
 * One line about the first issue of a failed parse, naming the field at fault: what users read
 * from the CLI, the admin API and the token endpoint.
 * @example
 * const result = Username.safeParse('al ice');
 * if (!result.success) describeFirstIssue(result.error, { label: () => 'username', input: 'al ice' });
 * // 'username "al ice": may hold only letters, digits and . _ @ -, starting with a letter or digit'
 * @example
 * describeFirstIssue(error, { label: (path) => path || 'body', input: body });
 * // 'clientSecret is required', 'body: unknown field bogus', 'type "saml": must be one of oidc, github, gitlab, ldap'
 */
export function describeFirstIssue(
  error: { readonly issues: readonly z.core.$ZodIssue[] },
  options: DescribeIssueOptions = {},
): string {
  const label = options.label ?? ((path: string) => path || 'input');
  const issue = error.issues[0];
  if (issue === undefined) return `${label('')} is not valid`;
  // Array positions (`scopes.1`) are left out unless asked for: the reader knows the list, not its indexes.
  const fields = issue.path.filter((segment): segment is string => typeof segment === 'string');
  const where = label(options.positions ? issue.path.map(String).join('.') : fields.join('.'));
  const known = 'input' in options || 'input' in issue;
  const value = 'input' in options ? valueAt(options.input, issue.path) : issue.input;
  if (
    known &&
    value === undefined &&
    (issue.code === 'invalid_type' || issue.code === 'invalid_union' || issue.code === 'invalid_value')
  )
    return `${where} is required${options.requiredContext ?? ''}`;
  if (issue.code === 'unrecognized_keys')
    return `${where}: unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.join(', ')}`;
  if (options.terse) return `${where} is not valid`;
  const secret = options.secrets?.includes(fields.at(-1) ?? '') ?? false;
  const quoted =
    !secret &&
    ((typeof value === 'string' && value.trim() !== '' && value.length <= MAX_QUOTED) ||
      typeof value === 'number');
  return `${where}${quoted ? ` ${JSON.stringify(value)}` : ''}: ${reason(issue)}`;
}

function reason(issue: z.core.$ZodIssue): string {
  // A discriminated union that matched no option lists them, rather than zod's "Invalid input".
  if (issue.code === 'invalid_union' && 'options' in issue && Array.isArray(issue.options))
    return `must be one of ${issue.options.join(', ')}`;
  return issue.message;
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  return path.reduce<unknown>(
    (node, segment) =>
      typeof node === 'object' && node !== null ? (node as Record<PropertyKey, unknown>)[segment] : undefined,
    input,
  );
}
