// Preloaded into idgate (`node --import`) by `pnpm bench --database postgres`: counts the
// statements idgate's PostgreSQL driver sends (each `query` call is one round trip: pg sends a
// parameterized statement as Parse/Bind/Execute/Sync at once) and the transactions it opens, and
// writes both to BENCH_STATEMENTS_FILE every 100 ms. The shared PostgreSQL server has no
// pg_stat_statements, and pg_stat_database reaches idle backends' counters only 10 s late.
import { renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const file = process.env.BENCH_STATEMENTS_FILE;
const from = process.env.BENCH_PG_FROM;
if (file !== undefined && from !== undefined) {
  // The same module instance as idgate's own `import pg from 'pg'` (CommonJS, one cache entry).
  const { Client } = createRequire(from)('pg');
  const query = Client.prototype.query;
  let statements = 0;
  let transactions = 0;
  Client.prototype.query = function countedQuery(/** @type {any[]} */ ...args) {
    statements += 1;
    const text = typeof args[0] === 'string' ? args[0] : args[0]?.text;
    if (typeof text === 'string' && /^\s*(begin|start transaction)\b/i.test(text)) transactions += 1;
    return query.apply(this, args);
  };
  // Written aside and renamed, so that a reader never sees half a file.
  const write = () => {
    writeFileSync(`${file}.tmp`, JSON.stringify({ statements, transactions }));
    renameSync(`${file}.tmp`, file);
  };
  write();
  setInterval(write, 100).unref();
}
