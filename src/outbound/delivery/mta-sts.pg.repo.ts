// SQL for the MTA-STS policy cache on PostgreSQL: the StsStore port (mta-sts.port.ts),
// with the same SQL semantics as the SQLite repository (mta-sts.repo.ts), in Bun SQL tagged
// templates (every value a bound parameter), and its retention purge.
import type { SQL } from "bun";
import type { Clock } from "../../lib/clock.ts";
import { pgInteger } from "../../store/pg-values.ts";
import type { StsStore } from "./mta-sts.port.ts";
import type { StsPolicy } from "./tls-policy.ts";
import { pgTablePurge } from "../../store/pg-purge-window.ts";
import type { Purge } from "../../store/purge-window.ts";

interface Row {
  policy_id: string;
  mode: StsPolicy["mode"];
  mx_json: string;
  /** BIGINT: strings from Bun's SQL client (bigints with `bigint: true`). */
  max_age: string | bigint;
  expires_at: string | bigint;
}

export function createPgStsRepo(sql: SQL, clock: Clock): StsStore {
  return {
    async get(domain) {
      const rows: Row[] = await sql`SELECT policy_id, mode, mx_json, max_age, expires_at FROM mta_sts_policies WHERE domain = ${domain}`;
      const row = rows[0];
      return row
        ? {
            id: row.policy_id,
            mode: row.mode,
            mx: JSON.parse(row.mx_json) as string[],
            maxAgeSeconds: pgInteger(row.max_age, "mta_sts_policies.max_age"),
            expiresAtMs: pgInteger(row.expires_at, "mta_sts_policies.expires_at"),
          }
        : null;
    },
    async put(domain, p) {
      await sql`INSERT INTO mta_sts_policies (domain, policy_id, mode, mx_json, max_age, fetched_at, expires_at)
        VALUES (${domain}, ${p.id}, ${p.mode}, ${JSON.stringify(p.mx)}, ${p.maxAgeSeconds}, ${clock.nowMs()}, ${p.expiresAtMs})
        ON CONFLICT (domain) DO UPDATE SET policy_id = EXCLUDED.policy_id, mode = EXCLUDED.mode, mx_json = EXCLUDED.mx_json,
          max_age = EXCLUDED.max_age, fetched_at = EXCLUDED.fetched_at, expires_at = EXCLUDED.expires_at`;
    },
  };
}

/**
 * The retention purge (createStsPurge on SQLite): policies that expired before the cutoff.
 * A refresh rewrites a row in place, so the table is not in expiry order: the walk covers
 * all of it; the delete checks the expiry again, so a policy refreshed meanwhile stays.
 */
export const createPgStsPurge = (sql: SQL): Purge => pgTablePurge(sql, "mta_sts_policies", "expires_at", undefined, false);
