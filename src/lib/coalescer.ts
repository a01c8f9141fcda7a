// Work of one kind that arrives while a run is under way, done together in the next run
// (issue 38: on PostgreSQL each statement is a round trip, each commit a WAL flush). The
// first item on an idle coalescer starts at once, so nothing waits for a timer; those that
// arrive meanwhile wait for it and go together, at most `maxPerRun` at a time. A run that
// fails fails its items, unless `alone` is given: then each item of a run of several is
// done again on its own, so only the one at fault fails (PgBatchWriter's writes, rolled
// back whole); reads (the suppression checks) fail together.

interface Waiting<T, R> {
  item: T;
  resolve: (result: R) => void;
  reject: (err: unknown) => void;
}

export interface CoalescerOptions<T, R> {
  maxPerRun?: number;
  /** Does one item of a failed run again on its own. */
  alone?(item: T): Promise<R>;
}

export class Coalescer<T, R> {
  private waiting: Waiting<T, R>[] = [];
  private running = false;

  constructor(
    /** Does every item given; the result of each, in order. */
    private readonly runAll: (items: readonly T[]) => Promise<R[]>,
    private readonly opts: CoalescerOptions<T, R> = {},
  ) {}

  /** Does `item` with whichever others are waiting; resolves with its result. */
  submit(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      if (!this.running) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      while (this.waiting.length > 0) {
        const batch = this.waiting.splice(0, this.opts.maxPerRun ?? 100);
        try {
          const results = await this.runAll(batch.map((w) => w.item));
          for (const [i, w] of batch.entries()) w.resolve(results[i] as R);
        } catch (err) {
          const alone = this.opts.alone;
          if (!alone || batch.length === 1) for (const w of batch) w.reject(err);
          else for (const w of batch) await alone(w.item).then(w.resolve, w.reject);
        }
      }
    } finally {
      this.running = false;
    }
  }
}
