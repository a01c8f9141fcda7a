// Reads of one kind that arrive while one is under way, read together in the next (issue
// 38): on PostgreSQL every read is a round trip, and the API's suppression check made one
// per send. The first read on an idle reader starts at once, so nothing waits for a timer;
// those that arrive meanwhile wait for it and go together, at most `maxPerRead` at a time.
// A read that fails fails the reads it held (they asked the same thing of the same store).

interface Waiting<Q, R> {
  query: Q;
  resolve: (result: R) => void;
  reject: (err: unknown) => void;
}

export class CoalescedReads<Q, R> {
  private waiting: Waiting<Q, R>[] = [];
  private reading = false;

  constructor(
    /** Answers every query given, in order. */
    private readonly readAll: (queries: readonly Q[]) => Promise<R[]>,
    private readonly maxPerRead = 100,
  ) {}

  read(query: Q): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.waiting.push({ query, resolve, reject });
      if (!this.reading) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.reading = true;
    try {
      while (this.waiting.length > 0) {
        const batch = this.waiting.splice(0, this.maxPerRead);
        try {
          const results = await this.readAll(batch.map((w) => w.query));
          for (const [i, w] of batch.entries()) w.resolve(results[i] as R);
        } catch (err) {
          for (const w of batch) w.reject(err);
        }
      }
    } finally {
      this.reading = false;
    }
  }
}
