import type { GrantUpstream } from '@idgate/core';
import type { UpstreamColumns } from '../schema.js';
import { toDate, toMs } from './support.js';

/**
 * The upstream columns of a row (grants, browser sessions, authorization codes, device
 * authorizations) for a record's upstream identity; all null for none.
 */
export function upstreamColumns(upstream: GrantUpstream | null | undefined): UpstreamColumns {
  return {
    upstream_provider: upstream?.provider ?? null,
    upstream_subject: upstream?.subject ?? null,
    upstream_validated_at: upstream == null ? null : toMs(upstream.validatedAt),
    upstream_state: upstream?.sealedState ?? null,
  };
}

/** The upstream identity a row's upstream columns hold, or null when they hold none. */
export function upstreamOf(row: UpstreamColumns): GrantUpstream | null {
  if (row.upstream_provider === null || row.upstream_subject === null || row.upstream_validated_at === null)
    return null;
  return {
    provider: row.upstream_provider,
    subject: row.upstream_subject,
    validatedAt: toDate(row.upstream_validated_at),
    sealedState: row.upstream_state,
  };
}
