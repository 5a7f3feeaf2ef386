/** One caller's items and how its promise settles. */
interface Waiting<I, R> {
  items: readonly I[];
  resolve: (results: R[]) => void;
  reject: (error: unknown) => void;
}

/** Options of {@link groupCommit}. */
export interface GroupCommitOptions {
  /** Items per batch at most (one caller's items are never split). */
  maxBatch: number;
  /** Runs the first write of an idle group: `setTimeout(run, 0)` unless given (Node: `setImmediate`). */
  schedule?: ((run: () => void) => void) | undefined;
}

/**
 * A group-commit writer: items submitted to an idle writer are written after one turn of the event
 * loop (`schedule`), with whatever else was submitted by then; items submitted while a batch is
 * being written wait together and go as the next batch — one `write` (one transaction) per batch.
 * Each caller gets the results of its own items once its batch has committed; a failed batch fails
 * every caller in it. (Without the first turn, a database whose writes complete synchronously —
 * SQLite — would never see two at once.)
 * @example const submit = groupCommit((rows) => insertAll(rows), { maxBatch: 500 }); await submit([row]);
 */
export function groupCommit<I, R>(
  write: (items: I[]) => Promise<R[]>,
  options: GroupCommitOptions,
): (items: readonly I[]) => Promise<R[]> {
  const schedule = options.schedule ?? ((run: () => void) => void setTimeout(run, 0));
  let queue: Waiting<I, R>[] = [];
  // From the first submission to an idle writer until the queue is empty again.
  let writing = false;

  const take = (): Waiting<I, R>[] => {
    let size = 0;
    let taken = 0;
    while (
      taken < queue.length &&
      (taken === 0 || size + (queue[taken]?.items.length ?? 0) <= options.maxBatch)
    ) {
      size += queue[taken]?.items.length ?? 0;
      taken++;
    }
    const batch = queue.slice(0, taken);
    queue = queue.slice(taken);
    return batch;
  };

  const writeAll = async (): Promise<void> => {
    try {
      while (queue.length > 0) {
        const batch = take();
        try {
          const results = await write(batch.flatMap((waiting) => waiting.items));
          let at = 0;
          for (const waiting of batch) {
            waiting.resolve(results.slice(at, at + waiting.items.length));
            at += waiting.items.length;
          }
        } catch (error) {
          for (const waiting of batch) waiting.reject(error);
        }
      }
    } finally {
      writing = false;
    }
  };

  return (items) => {
    if (items.length === 0) return Promise.resolve([]);
    return new Promise<R[]>((resolve, reject) => {
      queue.push({ items, resolve, reject });
      if (writing) return;
      writing = true;
      schedule(() => void writeAll());
    });
  };
}
