/**
 * The bounds idgate keeps on what it stores from outside, each defined here once: every path that
 * stores the value (the admin API, the CLI, the pages, federation) applies the same one. A value
 * an administrator sends beyond its bound is refused with a problem naming it; a value a browser
 * or an upstream identity provider sends is cut, by the rule given with each bound.
 * @example if (groups.length > LIMITS.groupsPerUser) throw …
 */
export const LIMITS = {
  /**
   * Characters of a `User-Agent` header kept wherever it is stored (browser sessions, audit
   * events): a longer one is cut to its first 512.
   */
  userAgentLength: 512,
  /** Groups a local user may be in: a user with more is refused (create, update, add a member). */
  groupsPerUser: 200,
  /**
   * Characters of a group name: a longer local one is refused; a longer upstream one (after its
   * provider's prefix) is dropped.
   */
  groupNameLength: 256,
  /**
   * Groups kept of what an upstream provider reports for one identity: past it, only the first
   * ones in byte order (after prefixing, dropping invalid names and duplicates) are kept, and the
   * sign-in's audit event counts the rest (`groupsDropped`).
   */
  upstreamGroupsPerIdentity: 200,
  /** Characters of an upstream username or display name kept: a longer one is cut. */
  upstreamNameLength: 256,
  /** Characters of an upstream email kept: a longer one (no valid address is) is dropped. */
  upstreamEmailLength: 254,
} as const;

/**
 * A `User-Agent` as idgate stores it: at most {@link LIMITS.userAgentLength} characters, null when
 * there is none.
 * @example storedUserAgent(request.headers['user-agent']) // 'Mozilla/5.0 …'
 */
export function storedUserAgent(value: string | null | undefined): string | null {
  if (value === undefined || value === null) return null;
  return value.length > LIMITS.userAgentLength ? value.slice(0, LIMITS.userAgentLength) : value;
}
