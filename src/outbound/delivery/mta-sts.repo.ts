// SQL for the MTA-STS policy cache (one row per recipient domain, replaced on refresh,
// deleted by the retention purge some time after it expired, src/jobs/purges.repo.ts):
// the StsStore port (mta-sts.port.ts), written once for both engines against a Db.
import type { Clock } from "../../lib/clock.ts";
import type { Db } from "../../store/db/db.ts";
import { toInt } from "../../store/db/dialect.ts";
import { sql } from "../../store/db/sql.ts";
import type { StsStore } from "./mta-sts.port.ts";
import type { StsPolicy } from "./tls-policy.ts";

interface Row {
  policy_id: string;
  mode: StsPolicy["mode"];
  mx_json: string;
  max_age: unknown;
  expires_at: unknown;
}

export function createStsRepo(db: Db, clock: Clock): StsStore {
  return {
    async get(domain) {
      const row = await db.get<Row>(
        sql`SELECT policy_id, mode, mx_json, max_age, expires_at FROM mta_sts_policies WHERE domain = ${domain}`,
      );
      return row
        ? {
            id: row.policy_id,
            mode: row.mode,
            mx: JSON.parse(row.mx_json) as string[],
            maxAgeSeconds: toInt(row.max_age, "mta_sts_policies.max_age"),
            expiresAtMs: toInt(row.expires_at, "mta_sts_policies.expires_at"),
          }
        : null;
    },
    async put(domain, p) {
      await db.run(sql`INSERT INTO mta_sts_policies (domain, policy_id, mode, mx_json, max_age, fetched_at, expires_at)
        VALUES (${domain}, ${p.id}, ${p.mode}, ${JSON.stringify(p.mx)}, ${p.maxAgeSeconds}, ${clock.nowMs()}, ${p.expiresAtMs})
        ON CONFLICT (domain) DO UPDATE SET policy_id = excluded.policy_id, mode = excluded.mode, mx_json = excluded.mx_json,
          max_age = excluded.max_age, fetched_at = excluded.fetched_at, expires_at = excluded.expires_at`);
    },
  };
}
