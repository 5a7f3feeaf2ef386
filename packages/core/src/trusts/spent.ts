import { groupCommit } from '../internal/group-commit.js';
import type { SubjectTokenUseRecord } from '../model.js';
import type { SubjectTokenUseRepository } from '../ports/storage.js';

/** What {@link groupSpends} writes through: a transaction over the spent subject tokens. */
export interface SpendBatchStorage {
  transaction<T>(
    work: (storage: { subjectTokenUses: Pick<SubjectTokenUseRepository, 'spend'> }) => Promise<T>,
  ): Promise<T>;
}

/**
 * `spend` of spent subject `jti`s with group commit: concurrent exchanges' spends go in one
 * transaction (one commit, one WAL write on SQLite, one fsync on PostgreSQL) instead of one each,
 * each still answered on its own — a `jti` spent twice in one batch is spent by the first only.
 * Measured: a commit per exchange cost as much system CPU as the rest of the exchange (bench/README.md).
 * @example const uses = { ...storage.subjectTokenUses, spend: groupSpends(storage) };
 */
export function groupSpends(
  storage: SpendBatchStorage,
  options: { maxBatch?: number; schedule?: ((run: () => void) => void) | undefined } = {},
): SubjectTokenUseRepository['spend'] {
  const submit = groupCommit<{ use: SubjectTokenUseRecord; now: Date }, boolean>(
    (items) =>
      storage.transaction(async (tx) => {
        const spent: boolean[] = [];
        for (const { use, now } of items) spent.push(await tx.subjectTokenUses.spend(use, now));
        return spent;
      }),
    { maxBatch: options.maxBatch ?? 200, schedule: options.schedule },
  );
  return async (use, now) => (await submit([{ use, now }]))[0] === true;
}
