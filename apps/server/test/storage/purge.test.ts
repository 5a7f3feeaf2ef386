import { describe, expect, it } from 'vitest';
import { startPurgeJob } from '../../src/maintenance.js';
import { createSqlStorage } from '../../src/storage/index.js';
import { testDatabaseUrls } from '../helpers/databases.js';
import {
  at,
  newClient,
  newCode,
  newGrant,
  newInteraction,
  newRefreshToken,
  newUser,
  useStorage,
} from './fixtures.js';

describe.each(testDatabaseUrls())('the purge of expired records on $name', (kind) => {
  const fixture = useStorage(kind);
  const quiet = { purged() {}, failed() {} };

  async function seed() {
    const { storage } = fixture();
    const user = await storage.users.create(newUser());
    await storage.clients.create(newClient());
    await storage.grants.create(newGrant({ userId: user.id }));
    // Each kind once expired by 2026-02-01, once alive then.
    await storage.authorizationCodes.create(
      newCode({ hash: 'old-code', expiresAt: at('2026-01-01T10:01:00Z') }),
    );
    await storage.authorizationCodes.create(
      newCode({ hash: 'live-code', expiresAt: at('2026-03-01T00:00:00Z') }),
    );
    await storage.refreshTokens.create(
      newRefreshToken({ hash: 'old-rt', expiresAt: at('2026-01-15T10:00:00Z') }),
    );
    await storage.refreshTokens.create(
      newRefreshToken({ hash: 'live-rt', expiresAt: at('2026-03-01T00:00:00Z') }),
    );
    await storage.interactions.create(
      newInteraction({ id: 'old-ix', expiresAt: at('2026-01-01T10:30:00Z') }),
    );
    await storage.interactions.create(
      newInteraction({ id: 'live-ix', expiresAt: at('2026-03-01T00:00:00Z') }),
    );
    await storage.revocations.add({
      kind: 'jti',
      value: 'old',
      expiresAt: at('2026-01-02T00:00:00Z'),
      createdAt: at('2026-01-01T00:00:00Z'),
    });
    await storage.revocations.add({
      kind: 'jti',
      value: 'live',
      expiresAt: at('2026-03-01T00:00:00Z'),
      createdAt: at('2026-01-01T00:00:00Z'),
    });
    const spentAt = at('2026-01-01T00:00:00Z');
    for (const [jti, expiresAt] of [
      ['old-jti', at('2026-01-01T00:10:00Z')],
      ['live-jti', at('2026-03-01T00:00:00Z')],
    ] as const)
      expect(
        await storage.subjectTokenUses.spend({ issuer: 'https://ci.example', jti, expiresAt }, spentAt),
      ).toBe(true);
    // Spent once: refused again while the token lives, whether or not it was swept.
    expect(
      await storage.subjectTokenUses.spend(
        { issuer: 'https://ci.example', jti: 'old-jti', expiresAt: at('2026-01-01T00:10:00Z') },
        at('2026-01-01T00:05:00Z'),
      ),
    ).toBe(false);
  }

  it('deletes what expired before now and keeps the rest', async () => {
    await seed();
    const { storage, database } = fixture();
    const job = startPurgeJob(
      {
        storage: createSqlStorage(database),
        database,
        clock: { now: () => at('2026-02-01T00:00:00Z').getTime() },
      },
      0,
      quiet,
    );
    expect(await job.run()).toEqual({
      authorizationCodes: 1,
      refreshTokens: 1,
      interactions: 1,
      deviceAuthorizations: 0,
      loginTransactions: 0,
      revocations: 1,
      subjectTokenUses: 1,
    });
    expect(
      await storage.subjectTokenUses.spend(
        { issuer: 'https://ci.example', jti: 'live-jti', expiresAt: at('2026-03-01T00:00:00Z') },
        at('2026-02-01T00:00:00Z'),
      ),
    ).toBe(false);
    expect(await storage.authorizationCodes.redeem('live-code', at('2026-02-01T00:00:00Z'))).toMatchObject({
      status: 'redeemed',
    });
    expect(await storage.refreshTokens.findByHash('live-rt')).toBeDefined();
    expect(await storage.refreshTokens.findByHash('old-rt')).toBeUndefined();
    expect(await storage.interactions.findById('live-ix')).toBeDefined();
    expect(await storage.revocations.isRevoked('jti', 'live', at('2026-02-01T00:00:00Z'))).toBe(true);
    // A second round finds nothing left to do.
    expect(Object.values((await job.run()) ?? {}).every((n) => n === 0)).toBe(true);
  });

  it.runIf(kind.name === 'postgres')('skips the round while another replica purges', async () => {
    await seed();
    const { database } = fixture();
    // Another replica's purge: the lock held on a connection of its own.
    const holder = await (database.pool as NonNullable<typeof database.pool>).connect();
    try {
      await holder.query('select pg_advisory_lock($1)', [0x1d9a7e02]);
      const job = startPurgeJob(
        { storage: createSqlStorage(database), database, clock: { now: () => Date.now() } },
        0,
        quiet,
      );
      expect(await job.run()).toBeUndefined();
    } finally {
      await holder.query('select pg_advisory_unlock($1)', [0x1d9a7e02]);
      holder.release();
    }
  });
});
