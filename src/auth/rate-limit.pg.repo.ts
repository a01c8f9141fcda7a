// Rate limits counted in PostgreSQL (the RateLimits port, rate-limit.ts), so nodes sharing
// one database share each account's limit instead of each allowing it in full. PostgreSQL
// only: on SQLite one process counts, exactly, in its own memory (RateLimiter). The window
// is approximated from two fixed windows (rate-window.ts says how and why). A take is one
// statement: the upsert of the current window's row counts the call only when the estimate
// allows it, and the row lock it takes makes concurrent takes on every node queue for that
// check, so no two of them both take the last slot.
import type { SQL } from "bun";
import type { RateLimit } from "../config/units.ts";
import { pgInteger } from "../store/pg-values.ts";
import type { RateLimits } from "./rate-limit.ts";
import { fixedWindow, windowDecision } from "./rate-window.ts";

/** How often a node deletes the rows no window needs any more (expires_at passed). */
export const RATE_COUNTER_PURGE_EVERY_MS = 60_000;

export interface PgRateLimits extends RateLimits {
  /** Deletes rows no window needs any more; the number deleted. take() runs it now and then. */
  purgeExpired(nowMs: number): Promise<number>;
}

type PgBigint = string | bigint;

/** `onPurgeError`: a failed background purge (logged by the caller; the take it followed is unharmed). */
export function createPgRateLimits(sql: SQL, onPurgeError: (err: unknown) => void = () => {}): PgRateLimits {
  let lastPurgeMs = Number.NEGATIVE_INFINITY;
  const purgeExpired = async (nowMs: number): Promise<number> => {
    const result: { count: number } = await sql`DELETE FROM rate_counters WHERE expires_at <= ${nowMs}`;
    return result.count;
  };
  return {
    purgeExpired,
    async take(key: string, rate: RateLimit, nowMs: number) {
      const { limit, windowMs } = rate;
      const { startMs, elapsedMs } = fixedWindow(nowMs, windowMs);
      // The same check as fitsOneMore (rate-window.ts), on the row as it is once locked.
      const rows: { taken: PgBigint | null; previous: PgBigint; current: PgBigint }[] = await sql`
        WITH previous AS (
          SELECT COALESCE(MAX(count), 0) AS count FROM rate_counters WHERE key = ${key} AND window_ms = ${windowMs} AND window_start = ${startMs - windowMs}
        ), taken AS (
          INSERT INTO rate_counters AS c (key, window_ms, window_start, count, expires_at)
          SELECT ${key}, ${windowMs}, ${startMs}, 1, ${startMs + 2 * windowMs} FROM previous
          WHERE previous.count * ${windowMs - elapsedMs}::bigint + ${windowMs}::bigint <= ${limit * windowMs}::bigint
          ON CONFLICT (key, window_ms, window_start) DO UPDATE SET count = c.count + 1
          WHERE (SELECT count FROM previous) * ${windowMs - elapsedMs}::bigint + (c.count + 1) * ${windowMs}::bigint <= ${limit * windowMs}::bigint
          RETURNING c.count
        )
        SELECT (SELECT count FROM taken) AS taken, (SELECT count FROM previous) AS previous,
          COALESCE((SELECT count FROM rate_counters WHERE key = ${key} AND window_ms = ${windowMs} AND window_start = ${startMs}), 0) AS current`;
      const row = rows[0]!;
      const previous = pgInteger(row.previous, "rate_counters.count");
      const allowed = row.taken !== null;
      // Counted: the row as locked held taken − 1. Refused: the statement's snapshot, perhaps a moment old.
      const current = allowed ? pgInteger(row.taken!, "rate_counters.count") - 1 : pgInteger(row.current, "rate_counters.count");
      if (nowMs - lastPurgeMs >= RATE_COUNTER_PURGE_EVERY_MS) {
        lastPurgeMs = nowMs;
        purgeExpired(nowMs).catch(onPurgeError);
      }
      return windowDecision({ previous, current }, rate, elapsedMs, allowed);
    },
  };
}
