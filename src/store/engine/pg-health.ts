// /healthz on PostgreSQL: "the store takes a durable write" must be answered without a
// round trip in the request (the health report is synchronous, and a load balancer polls
// it often), so a background write every HEALTH_WRITE_INTERVAL_MS keeps the answer fresh.
// Each node writes its own row (healthz_at:<node id>): nodes do not wait on one row's lock.
import type { SQL } from "bun";
import type { Logger } from "../../lib/logger.ts";

export const HEALTH_WRITE_INTERVAL_MS = 2_000;
/** An answer older than this is no answer: the write hangs (the server stopped responding). */
export const HEALTH_STALE_AFTER_MS = 10_000;

export interface PgHealth {
  /** Throws unless a durable write succeeded within HEALTH_STALE_AFTER_MS of `nowMs`. */
  check(nowMs: number): void;
  stop(): void;
}

/** The verdict from the last write's time and error (pure: table-tested). */
export function healthVerdict(last: { okAtMs: number | null; error: string | null }, nowMs: number): string | null {
  if (last.error !== null) return last.error;
  if (last.okAtMs === null || nowMs - last.okAtMs > HEALTH_STALE_AFTER_MS)
    return `no durable write succeeded in the last ${HEALTH_STALE_AFTER_MS / 1000} s`;
  return null;
}

export async function pgHealth(sql: SQL, nodeId: string, logger: Logger): Promise<PgHealth> {
  const key = `healthz_at:${nodeId}`;
  const last: { okAtMs: number | null; error: string | null } = { okAtMs: null, error: null };
  let writing = false;
  const write = async () => {
    if (writing) return;
    writing = true;
    // Wall time, as /healthz compares it (a test's clock may stand anywhere).
    const atMs = Date.now();
    try {
      await sql`INSERT INTO store_meta (key, value) VALUES (${key}, ${String(atMs)}) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`;
      if (last.error !== null) logger.info("the store takes writes again");
      last.okAtMs = atMs;
      last.error = null;
    } catch (err) {
      if (last.error === null) logger.error("the store refused a write", { err });
      last.error = (err as Error).message.split("\n")[0]!;
    } finally {
      writing = false;
    }
  };
  await write();
  const timer = setInterval(() => void write(), HEALTH_WRITE_INTERVAL_MS);
  timer.unref();
  return {
    check(nowMs) {
      const problem = healthVerdict(last, nowMs);
      if (problem !== null) throw new Error(problem);
    },
    stop: () => clearInterval(timer),
  };
}
