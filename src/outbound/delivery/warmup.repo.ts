// SQL for the warm-up counts: the WarmupCounts port (warmup.port.ts), written once for both
// engines against a Db. A take is a compare-and-set on the day's row (sent = what was read),
// tried again when another node moved it in between: each statement is atomic on both
// engines, so no two takes hand out the same part of a cap.
import type { Db } from "../../store/db/db.ts";
import { toInt } from "../../store/db/dialect.ts";
import { sql } from "../../store/db/sql.ts";
import type { WarmupCounts } from "./warmup.port.ts";
import { withinCap } from "./warmup.ts";

/** Compare-and-set rounds before a take gives up for now (the recipients wait for the next claim). */
const TAKE_ROUNDS = 8;

export function createWarmupRepo(db: Db): WarmupCounts {
  const sent = async (ip: string, destination: string, dayStartMs: number): Promise<number> => {
    const row = await db.get<{ sent: unknown }>(
      sql`SELECT sent FROM warmup_counts WHERE source_ip = ${ip} AND destination = ${destination} AND day_start = ${dayStartMs}`,
    );
    return row ? toInt(row.sent, "warmup_counts.sent") : 0;
  };
  return {
    sent,
    async take(ip, destination, dayStartMs, want, cap) {
      if (want <= 0 || cap <= 0) return 0;
      await db.run(sql`INSERT INTO warmup_counts (source_ip, destination, day_start, sent)
        VALUES (${ip}, ${destination}, ${dayStartMs}, 0) ON CONFLICT DO NOTHING`);
      for (let round = 0; round < TAKE_ROUNDS; round++) {
        const before = await sent(ip, destination, dayStartMs);
        const granted = withinCap(cap, before, want);
        if (granted === 0) return 0;
        const moved = await db.run(sql`UPDATE warmup_counts SET sent = ${before + granted}
          WHERE source_ip = ${ip} AND destination = ${destination} AND day_start = ${dayStartMs} AND sent = ${before}`);
        if (moved.changes === 1) return granted;
      }
      return 0;
    },
    async purgeBefore(dayStartMs) {
      return (await db.run(sql`DELETE FROM warmup_counts WHERE day_start < ${dayStartMs}`)).changes;
    },
  };
}
