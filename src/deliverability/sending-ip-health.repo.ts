// SQL for the sending IPs' health (sending-ip-health.port.ts), written once for both
// engines against a Db. The hourly check runs on one node (a job lease), but every node
// checks once when it starts, so two may replace the rows at once: each upserts its rows
// (in one order, so two cannot deadlock) and deletes the others, in one transaction, so a
// reader sees one check's rows, never half of two.
import type { Db } from "../store/db/db.ts";
import { collateC, toInt } from "../store/db/dialect.ts";
import { inList, sql } from "../store/db/sql.ts";
import type { SendingIpHealthRepo } from "./sending-ip-health.port.ts";
import type { SendingIpHealth } from "./sending-ip.ts";

type Row = {
  ip: string;
  helo: string;
  ptr: string | null;
  fcrdns: unknown;
  helo_matches: unknown;
  listed_json: string;
  unknown_json: string;
  checked_at: unknown;
};

const flagOrNull = (v: unknown, column: string): boolean | null => (v === null ? null : toInt(v, column) === 1);
const bit = (v: boolean | null): number | null => (v === null ? null : v ? 1 : 0);

const fromRow = (r: Row): SendingIpHealth => ({
  ip: r.ip,
  helo: r.helo,
  ptr: r.ptr,
  fcrdns: flagOrNull(r.fcrdns, "sending_ip_health.fcrdns"),
  helo_matches: flagOrNull(r.helo_matches, "sending_ip_health.helo_matches"),
  listed: JSON.parse(r.listed_json),
  unknown: JSON.parse(r.unknown_json),
  checkedAtMs: toInt(r.checked_at, "sending_ip_health.checked_at"),
});

export function createSendingIpHealthRepo(db: Db): SendingIpHealthRepo {
  return {
    async replaceAll(rows) {
      await db.tx(async (tx) => {
        const sorted = [...rows].sort((a, b) => (a.ip < b.ip ? -1 : a.ip > b.ip ? 1 : 0));
        for (const h of sorted) {
          await tx.run(sql`INSERT INTO sending_ip_health (ip, helo, ptr, fcrdns, helo_matches, listed_json, unknown_json, checked_at)
            VALUES (${h.ip}, ${h.helo}, ${h.ptr}, ${bit(h.fcrdns)}, ${bit(h.helo_matches)}, ${JSON.stringify(h.listed)},
              ${JSON.stringify(h.unknown)}, ${h.checkedAtMs})
            ON CONFLICT (ip) DO UPDATE SET helo = excluded.helo, ptr = excluded.ptr, fcrdns = excluded.fcrdns,
              helo_matches = excluded.helo_matches, listed_json = excluded.listed_json, unknown_json = excluded.unknown_json,
              checked_at = excluded.checked_at`);
        }
        await tx.run(
          sql`DELETE FROM sending_ip_health WHERE NOT (${inList(
            "ip",
            sorted.map((h) => h.ip),
          )})`,
        );
      });
    },
    async list() {
      const rows = await db.all<Row>(sql`SELECT ip, helo, ptr, fcrdns, helo_matches, listed_json, unknown_json, checked_at
        FROM sending_ip_health ORDER BY ip${collateC}`);
      return rows.map(fromRow);
    },
  };
}
