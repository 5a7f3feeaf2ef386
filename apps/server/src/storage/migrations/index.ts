import { Kysely, type Migration, type MigrationProvider, type MigrationResult, Migrator } from 'kysely';
import type { Database } from '../database.js';
import type { Schema } from '../schema.js';
import * as m0001 from './0001_initial.js';
import * as m0002 from './0002_oidc_flows.js';
import * as m0003 from './0003_federation.js';
import * as m0004 from './0004_change_log.js';
import * as m0005 from './0005_users_email.js';
import * as m0006 from './0006_device_authorizations.js';
import * as m0007 from './0007_clusters.js';
import * as m0008 from './0008_users_admin.js';
import * as m0009 from './0009_session_activity.js';
import * as m0010 from './0010_client_secrets.js';
import * as m0013 from './0013_grant_upstream.js';
import * as m0014 from './0014_login_attempt_origin.js';
import * as m0015 from './0015_session_upstream.js';
import * as m0016 from './0016_audit_events.js';
import * as m0017 from './0017_device_poll_slow_down.js';
import * as m0018 from './0018_upstream_checked_at.js';
import * as m0019 from './0019_grant_resources.js';
import * as m0020 from './0020_audit_event_origin.js';
import * as m0021 from './0021_incident_response.js';
import * as m0022 from './0022_audit_chain.js';
import * as m0023 from './0023_groups.js';
import * as m0024 from './0024_factors.js';
import * as m0025 from './0025_trusts.js';
import * as m0026 from './0026_declared_objects.js';
import * as m0027 from './0027_cluster_mfa.js';
import * as m0028 from './0028_webauthn.js';
import * as m0029 from './0029_mfa_policies.js';

/**
 * Every migration, by name; names sort in the order they apply. Listed in code rather than read from
 * a folder so the compiled server carries them wherever it runs.
 */
const MIGRATIONS: Readonly<Record<string, Migration>> = {
  '0001_initial': m0001,
  '0002_oidc_flows': m0002,
  '0003_federation': m0003,
  '0004_change_log': m0004,
  '0005_users_email': m0005,
  '0006_device_authorizations': m0006,
  '0007_clusters': m0007,
  '0008_users_admin': m0008,
  '0009_session_activity': m0009,
  '0010_client_secrets': m0010,
  '0013_grant_upstream': m0013,
  '0014_login_attempt_origin': m0014,
  '0015_session_upstream': m0015,
  '0016_audit_events': m0016,
  '0017_device_poll_slow_down': m0017,
  '0018_upstream_checked_at': m0018,
  '0019_grant_resources': m0019,
  '0020_audit_event_origin': m0020,
  '0021_incident_response': m0021,
  '0022_audit_chain': m0022,
  '0023_groups': m0023,
  '0024_factors': m0024,
  '0025_trusts': m0025,
  '0026_declared_objects': m0026,
  '0027_cluster_mfa': m0027,
  '0028_webauthn': m0028,
  '0029_mfa_policies': m0029,
};

/** The names of every migration, in the order they apply. */
export const MIGRATION_NAMES: readonly string[] = Object.keys(MIGRATIONS).sort();

const provider: MigrationProvider = { getMigrations: async () => ({ ...MIGRATIONS }) };

type Target = Database | Kysely<Schema>;

function migrator(target: Target): Migrator {
  // Migrations are written against no particular schema, hence the widening.
  const db = (target instanceof Kysely ? target : target.db) as unknown as Kysely<unknown>;
  return new Migrator({ db, provider, nameComparator: byCodePoint });
}

/**
 * Migration names (`0001_initial`) in code-point order: the order Kysely's default gives them
 * (`localeCompare`), without loading an ICU collator into every process that starts.
 */
function byCodePoint(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Applies every migration not yet applied, in order; safe to run concurrently from several replicas
 * (Kysely takes a lock) and again when nothing is pending.
 * @returns the names of the migrations this call applied.
 * @throws Error naming the failed migration; migrations before it stay applied.
 */
export async function migrateToLatest(target: Target): Promise<{ applied: string[] }> {
  const { error, results = [] } = await migrator(target).migrateToLatest();
  const applied = names(results, 'Success');
  if (error !== undefined) {
    const failed = names(results, 'Error')[0];
    const reason = error instanceof Error ? error.message : String(error);
    const where = failed === undefined ? 'before any migration ran' : `in migration ${failed}`;
    throw new Error(`Database migration failed ${where}: ${reason}`, { cause: error });
  }
  return { applied };
}

/** Names of the migrations not yet applied, in the order they would apply. */
export async function pendingMigrations(target: Target): Promise<string[]> {
  const all = await migrator(target).getMigrations();
  return all.filter((m) => m.executedAt === undefined).map((m) => m.name);
}

function names(results: readonly MigrationResult[], status: MigrationResult['status']): string[] {
  return results.filter((r) => r.status === status).map((r) => r.migrationName);
}
