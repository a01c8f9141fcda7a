// The outcomes a chunk records while it goes on (deliver-chunk.ts): each commits while the
// next message goes out, and the chunk ends once all have. Each is handled the moment it
// settles: one that failed (the store went away) while the chunk still waited for the next
// SMTP reply would otherwise be a rejection nobody handled yet, which ends the process.
export class PendingOutcomes {
  private readonly settling: Promise<void>[] = [];
  private readonly failures: unknown[] = [];

  add(outcome: Promise<unknown>): void {
    this.settling.push(
      outcome.then(
        () => {},
        (err) => void this.failures.push(err),
      ),
    );
  }

  /** Once every outcome added has settled: the errors of those that failed (never rejects). */
  async settled(): Promise<unknown[]> {
    await Promise.all(this.settling);
    return this.failures;
  }
}
