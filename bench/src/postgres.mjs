// PostgreSQL for `--database postgres`: a throwaway database, the CPU of its backend processes and
// the statements idgate sends to it.
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { cpuSeconds } from './processes.mjs';

/** @param {string} url @param {string} sql @param {unknown[]} [params] */
async function query(url, sql, params = []) {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows;
  } finally {
    await client.end();
  }
}

/**
 * Creates an empty database on the server of `url` (its user needs CREATEDB).
 * @param {string} url
 * @returns {Promise<{ url: string, name: string, drop: () => Promise<void> }>}
 */
export async function throwawayDatabase(url) {
  const name = `idgate_bench_${Date.now().toString(36)}_${process.pid}`;
  await query(url, `CREATE DATABASE ${name}`);
  const database = new URL(url);
  database.pathname = `/${name}`;
  return {
    url: database.toString(),
    name,
    drop: async () => {
      await query(url, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

/**
 * Counters of one database: the CPU seconds of its backend processes (from /proc: the server must
 * run on this machine; undefined otherwise) and, when idgate runs with count-statements.mjs, the
 * statements and transactions it sent. The backends are listed from `pg_stat_activity` through the
 * admin URL, so the connection asking is not one of them.
 * @param {string} adminUrl @param {string} database @param {string | undefined} statementsFiles
 */
export function databaseProbe(adminUrl, database, statementsFiles) {
  return async () => {
    // count-statements.mjs writes every 100 ms: let the last writes of a run land.
    await new Promise((resolve) => setTimeout(resolve, 250));
    const rows = await query(adminUrl, 'SELECT pid FROM pg_stat_activity WHERE datname = $1', [database]);
    /** @type {Record<string, number>} */
    const counters = {};
    let cpu = 0;
    let seen = 0;
    for (const { pid } of rows) {
      const seconds = cpuSeconds(Number(pid));
      if (seconds !== undefined) {
        cpu += seconds;
        counters[`pid:${pid}`] = seconds;
        seen += 1;
      }
    }
    if (seen > 0) counters.postgresCpu = cpu;
    for (const file of (statementsFiles ?? '').split(',').filter(Boolean)) {
      try {
        const counts = JSON.parse(readFileSync(file, 'utf8'));
        counters.statements = (counters.statements ?? 0) + counts.statements;
        counters.transactions = (counters.transactions ?? 0) + counts.transactions;
      } catch {
        // not written yet
      }
    }
    return counters;
  };
}

/**
 * Per-request deltas between two probes: PostgreSQL backend CPU (µs; a backend that appeared
 * between them counts whole, one that ended is lost), statements, transactions.
 * @param {Record<string, number>} before @param {Record<string, number>} after @param {number} requests
 */
export function perRequest(before, after, requests) {
  if (requests === 0) return {};
  /** @type {Record<string, number>} */
  const out = {};
  if (after.postgresCpu !== undefined) {
    let cpu = 0;
    for (const [key, value] of Object.entries(after)) {
      if (key.startsWith('pid:')) cpu += value - (before[key] ?? 0);
    }
    out.postgresCpuMicros = (cpu * 1e6) / requests;
  }
  if (after.statements !== undefined && before.statements !== undefined) {
    out.statements = (after.statements - before.statements) / requests;
    out.transactions = ((after.transactions ?? 0) - (before.transactions ?? 0)) / requests;
  }
  return out;
}
