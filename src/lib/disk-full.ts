// A full disk (or quota): SQLite's SQLITE_FULL, the file system's ENOSPC or EDQUOT. It is
// not a bug of ours and not a failure of a peer: the API answers 507 Insufficient Storage
// (as MinIO and WebDAV servers do), SMTP answers 451 4.3.0 naming local storage, and the
// log says "disk full" once a minute at most, however many writes fail meanwhile.
import type { Logger } from "./logger.ts";

const FULL_CODES = new Set(["SQLITE_FULL", "ENOSPC", "EDQUOT"]);

/** Whether `err` (or an error it wraps, as `cause`) says the disk is full. */
export function isDiskFull(err: unknown): boolean {
  for (let e = err, depth = 0; e && typeof e === "object" && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (FULL_CODES.has(String((e as { code?: unknown }).code))) return true;
  }
  return false;
}

/** At most one "disk full" line in this long, however many writes fail. */
export const DISK_FULL_LOG_INTERVAL_MS = 60_000;

/** Reports a full disk to the log, rate-limited: one line, then one per interval with the count since. */
export class DiskFullLog {
  private lastLoggedMs: number | null = null;
  private since = 0;

  constructor(
    private readonly logger: Logger,
    private readonly nowMs: () => number = Date.now,
    private readonly intervalMs = DISK_FULL_LOG_INTERVAL_MS,
  ) {}

  /** `where`: what could not be written ("api", "incoming statuses", "local attachments"). */
  report(where: string, err: unknown): void {
    this.since++;
    const now = this.nowMs();
    if (this.lastLoggedMs !== null && now - this.lastLoggedMs < this.intervalMs) return;
    const { code, message } = err as { code?: string; message?: string };
    this.logger.error("disk full", {
      where,
      code,
      err: message,
      failed_writes: this.since,
      next_report_in_s: Math.round(this.intervalMs / 1000),
    });
    this.lastLoggedMs = now;
    this.since = 0;
  }
}
