// SQL for destinations (issue 29): the DestinationRepo port, written once for both engines
// against a Db. The contract test (test/outbound/destinations/destinations-repo.contract.test.ts)
// runs the same cases on SQLite and PostgreSQL.
import type { Db } from "../../store/db/db.ts";
import { toInt, toIntOrNull } from "../../store/db/dialect.ts";
import { inList, sql } from "../../store/db/sql.ts";
import type { DestinationRepo } from "./destinations.port.ts";
import type { DestinationPause } from "./rules.ts";

interface Row {
  destination: string;
  source: string;
  reason: string;
  paused_at: unknown;
  until_at: unknown;
  pause_ms: unknown;
}

const fromRow = (r: Row): DestinationPause => ({
  destination: r.destination,
  source: r.source === "operator" ? "operator" : "throttle",
  reason: r.reason,
  pausedAtMs: toInt(r.paused_at, "destination_pauses.paused_at"),
  untilMs: toIntOrNull(r.until_at, "destination_pauses.until_at"),
  pauseMs: toInt(r.pause_ms, "destination_pauses.pause_ms"),
});

/** Recipients updated by one statement at most: a claim takes a few hundred. */
const RECIPIENTS_PER_STATEMENT = 500;

/**
 * `logDb`: where a recipient's destination is written, the cheaper durable path (SQLite's
 * second connection, no fsync of its own; the same pool on PostgreSQL): it is written at
 * each claim, and a destination lost in a crash is written again at the next.
 */
export function createDestinationRepo(db: Db, logDb: Db = db): DestinationRepo {
  return {
    async listPauses() {
      return (await db.all<Row>(sql`SELECT * FROM destination_pauses ORDER BY destination`)).map(fromRow);
    },
    async getPause(destination) {
      const row = await db.get<Row>(sql`SELECT * FROM destination_pauses WHERE destination = ${destination}`);
      return row ? fromRow(row) : null;
    },
    async putPause(p) {
      await db.run(sql`INSERT INTO destination_pauses (destination, source, reason, paused_at, until_at, pause_ms)
        VALUES (${p.destination}, ${p.source}, ${p.reason}, ${p.pausedAtMs}, ${p.untilMs}, ${p.pauseMs})
        ON CONFLICT (destination) DO UPDATE SET source = excluded.source, reason = excluded.reason,
          paused_at = excluded.paused_at, until_at = excluded.until_at, pause_ms = excluded.pause_ms`);
    },
    async removePause(destination) {
      return (await db.run(sql`DELETE FROM destination_pauses WHERE destination = ${destination}`)).changes > 0;
    },
    async removeStalePauses(nowMs) {
      return (
        await db.run(
          sql`DELETE FROM destination_pauses WHERE source = 'throttle' AND until_at IS NOT NULL AND until_at + pause_ms < ${nowMs}`,
        )
      ).changes;
    },
    async recordDestination(recipientIds, destination) {
      for (let i = 0; i < recipientIds.length; i += RECIPIENTS_PER_STATEMENT) {
        const ids = recipientIds.slice(i, i + RECIPIENTS_PER_STATEMENT);
        await logDb.run(
          sql`UPDATE outbound_recipients SET destination = ${destination} WHERE ${inList("id", ids)} AND (destination IS NULL OR destination <> ${destination})`,
        );
      }
    },
  };
}
