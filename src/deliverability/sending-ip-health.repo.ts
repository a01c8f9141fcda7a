// SQL for the sending IPs' health (sending-ip-health.port.ts), written once for both
// engines against a Db. The hourly check runs on one node (a job lease) and replaces the
// rows in one transaction, so a reader sees one check's rows, never half of two.
import type { Db } from "../store/db/db.ts";
import { collateC, toInt } from "../store/db/dialect.ts";
import { sql } from "../store/db/sql.ts";
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
        await tx.run(sql`DELETE FROM sending_ip_health`);
        for (const h of rows) {
          await tx.run(sql`INSERT INTO sending_ip_health (ip, helo, ptr, fcrdns, helo_matches, listed_json, unknown_json, checked_at)
            VALUES (${h.ip}, ${h.helo}, ${h.ptr}, ${bit(h.fcrdns)}, ${bit(h.helo_matches)}, ${JSON.stringify(h.listed)},
              ${JSON.stringify(h.unknown)}, ${h.checkedAtMs})`);
        }
      });
    },
    async list() {
      const rows = await db.all<Row>(sql`SELECT ip, helo, ptr, fcrdns, helo_matches, listed_json, unknown_json, checked_at
        FROM sending_ip_health ORDER BY ip${collateC}`);
      return rows.map(fromRow);
    },
  };
}
