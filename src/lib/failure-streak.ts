// A loop that fails on every turn while something it needs is away (the store, during a
// PostgreSQL outage) would log a line per turn: a flood that buries the first line, the one
// that says what went wrong. The first failure of a streak is logged; the next ones are
// counted, and said again at most once per `repeatEveryMs` (a failure that never ends is
// not hidden); the first success after a streak says how long it was.
import type { LogFields, Logger } from "./logger.ts";

/** The least time between two lines of one streak. */
export const STREAK_REPEAT_EVERY_MS = 60_000;

export class FailureStreak {
  private failures = 0;
  private loggedAtMs = 0;

  constructor(
    private readonly logger: Logger,
    private readonly level: "warn" | "error",
    /** The failure's line, as it was logged on each turn before. */
    private readonly msg: string,
    private readonly repeatEveryMs = STREAK_REPEAT_EVERY_MS,
    private readonly nowMs: () => number = () => performance.now(),
  ) {}

  failed(err: unknown, fields: LogFields = {}): void {
    const nowMs = this.nowMs();
    this.failures++;
    if (this.failures > 1 && nowMs - this.loggedAtMs < this.repeatEveryMs) return;
    this.loggedAtMs = nowMs;
    this.logger[this.level](this.msg, { err, ...fields, failures_in_a_row: this.failures });
  }

  succeeded(fields: LogFields = {}): void {
    if (this.failures === 0) return;
    this.logger.info(`${this.msg}: works again`, { ...fields, failures_in_a_row: this.failures });
    this.failures = 0;
  }
}
