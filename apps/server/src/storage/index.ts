export {
  type Database,
  DatabaseNotFoundError,
  type DialectName,
  type OpenDatabaseOptions,
  openDatabase,
} from './database.js';
export { migrateToLatest, pendingMigrations } from './migrations/index.js';
export type { Schema } from './schema.js';
export { createSqlStorage, type SqlStorage } from './sql-storage.js';
