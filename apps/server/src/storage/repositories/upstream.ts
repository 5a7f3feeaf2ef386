import type { GrantUpstream } from '@idgate/core';
import type { Kysely } from 'kysely';
import type { Schema, UpstreamColumns } from '../schema.js';
import { toDate, toMs } from './columns.js';

/**
 * The upstream columns of a row (grants, browser sessions, authorization codes, device
 * authorizations) for a record's upstream identity; all null for none.
 */
export function upstreamColumns(upstream: GrantUpstream | null | undefined): UpstreamColumns {
  return {
    upstream_provider: upstream?.provider ?? null,
    upstream_subject: upstream?.subject ?? null,
    upstream_validated_at: upstream == null ? null : toMs(upstream.validatedAt),
    upstream_checked_at: upstream == null ? null : toMs(upstream.checkedAt),
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
    // Null only on a row a replica older than migration 0018 wrote during an upgrade.
    checkedAt: toDate(row.upstream_checked_at ?? row.upstream_validated_at),
    sealedState: row.upstream_state,
  };
}

/**
 * Replaces one sealed upstream state of an identity on every row of `table` holding it (the
 * grants and the session of one browser sign-in share it); how many rows changed.
 */
export async function replaceUpstreamState(
  db: Kysely<Schema>,
  table: 'grants' | 'browser_sessions',
  upstream: { provider: string; subject: string; previous: string; next: string },
): Promise<number> {
  const result = await db
    .updateTable(table)
    .set({ upstream_state: upstream.next })
    .where('upstream_provider', '=', upstream.provider)
    .where('upstream_subject', '=', upstream.subject)
    .where('upstream_state', '=', upstream.previous)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}
