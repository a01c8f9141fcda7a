// Where the warm-up caps count (issue 29): recipients given to a destination from a source
// address on one UTC day, in the store, so every node of a cluster draws on one count.
// warmup.repo.ts implements it once for SQLite and PostgreSQL.

export interface WarmupCounts {
  /**
   * Takes up to `want` of the `cap` for `destination` from `sourceIp` on the day starting
   * at `dayStartMs`, atomically (two nodes never both get the last one); returns how many
   * it got, 0 when the day's cap is spent.
   */
  take(sourceIp: string, destination: string, dayStartMs: number, want: number, cap: number): Promise<number>;
  /** What the day has given so far (0 when nothing). */
  sent(sourceIp: string, destination: string, dayStartMs: number): Promise<number>;
  /** Deletes the counts of days before `dayStartMs`; returns how many rows. */
  purgeBefore(dayStartMs: number): Promise<number>;
}
