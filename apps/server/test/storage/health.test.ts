import { StorageUnavailableError } from '@idgate/core';
import { describe, expect, it } from 'vitest';
import { StorageHealth } from '../../src/storage/health.js';

const lines: Array<[string, object, string]> = [];
const logger = {
  warn: (fields: object, message: string) => void lines.push(['warn', fields, message]),
  info: (fields: object, message: string) => void lines.push(['info', fields, message]),
};
const failure = (code: 'unreachable' | 'busy' | 'timeout', message: string) =>
  new StorageUnavailableError(code, { cause: new Error(message) });

describe('StorageHealth', () => {
  it('logs an outage once when it starts and once when it ends, with its length', () => {
    lines.length = 0;
    let now = 1_000;
    const health = new StorageHealth({ now: () => now });
    health.logTo(logger);
    expect(health.succeeded()).toBe(false);
    expect(health.failed(failure('unreachable', 'connect ECONNREFUSED 127.0.0.1:5432'))).toBe(true);
    for (let i = 0; i < 100; i++) expect(health.failed(failure('timeout', 'Query read timeout'))).toBe(false);
    expect(health.state).toEqual({ available: false, since: 1_000, reason: 'unreachable' });
    now = 4_500;
    expect(health.succeeded()).toBe(true);
    expect(health.succeeded()).toBe(false);
    expect(health.available).toBe(true);
    expect(lines).toEqual([
      [
        'warn',
        { reason: 'unreachable', cause: 'connect ECONNREFUSED 127.0.0.1:5432' },
        'storage unavailable',
      ],
      ['info', { outageMs: 3_500, reason: 'unreachable' }, 'storage available again'],
    ]);
  });

  it('a busy (locked) database stays available and is logged at most once a minute', () => {
    lines.length = 0;
    let now = 0;
    const health = new StorageHealth({ now: () => now });
    health.logTo(logger);
    expect(health.failed(failure('busy', 'database is locked'))).toBe(true);
    for (let i = 0; i < 5; i++) expect(health.failed(failure('busy', 'database is locked'))).toBe(false);
    expect(health.available).toBe(true);
    now = 60_000;
    expect(health.failed(failure('busy', 'database is locked'))).toBe(true);
    expect(lines.map(([, fields, message]) => [message, (fields as { unlogged: number }).unlogged])).toEqual([
      ['storage busy', 0],
      ['storage busy', 5],
    ]);
  });

  it('a statement PostgreSQL cancelled (57014) or too many connections (53300) is the server answering: not an outage', () => {
    const health = new StorageHealth();
    const said: string[] = [];
    health.logTo({ warn: (_f, m) => void said.push(m), info: (_f, m) => void said.push(m) });
    const sqlstate = (code: string) =>
      new StorageUnavailableError('timeout', {
        cause: Object.assign(new Error('canceling statement due to statement timeout'), { code }),
      });
    health.failed(sqlstate('57014'));
    health.failed(sqlstate('53300'));
    expect(health.available).toBe(true);
    health.failed(sqlstate('57P01'));
    expect(health.available).toBe(false);
    expect(said).toEqual(['storage busy', 'storage unavailable']);
  });

  it('logs the turn to the logger it is given (a request’s), else to its own', () => {
    const health = new StorageHealth();
    const own: string[] = [];
    const request: string[] = [];
    health.logTo({ warn: (_f, m) => void own.push(m), info: (_f, m) => void own.push(m) });
    health.failed(failure('unreachable', 'x'), {
      warn: (_f, m) => void request.push(m),
      info: (_f, m) => void request.push(m),
    });
    health.succeeded();
    expect([request, own]).toEqual([['storage unavailable'], ['storage available again']]);
  });
});
