// SQL for the MTA-STS policy cache on SQLite (one row per recipient domain, replaced on
// refresh, deleted by the retention purge some time after it expired): the StsStore port
// (mta-sts.port.ts), as mta-sts.pg.repo.ts is on PostgreSQL. Its statements run
// synchronously; the methods are async only to share the port.
import type { Clock } from "../../lib/clock.ts";
import { rowidPurge, type Purge, type WindowRow } from "../../store/purge-window.ts";
import type { Store } from "../../store/store.ts";
import type { StsStore } from "./mta-sts.port.ts";
import type { StsPolicy } from "./tls-policy.ts";

interface Row {
  policy_id: string;
  mode: StsPolicy["mode"];
  mx_json: string;
  max_age: number;
  expires_at: number;
}

export function createStsRepo(store: Store, clock: Clock): StsStore {
  const select = store.db.query<Row, [string]>(
    "SELECT policy_id, mode, mx_json, max_age, expires_at FROM mta_sts_policies WHERE domain = ?",
  );
  const upsert = store.db.query(
    `INSERT INTO mta_sts_policies (domain, policy_id, mode, mx_json, max_age, fetched_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (domain) DO UPDATE SET policy_id = excluded.policy_id, mode = excluded.mode, mx_json = excluded.mx_json,
       max_age = excluded.max_age, fetched_at = excluded.fetched_at, expires_at = excluded.expires_at`,
  );
  return {
    async get(domain) {
      const row = select.get(domain);
      return row
        ? {
            id: row.policy_id,
            mode: row.mode,
            mx: JSON.parse(row.mx_json) as string[],
            maxAgeSeconds: row.max_age,
            expiresAtMs: row.expires_at,
          }
        : null;
    },
    async put(domain, p) {
      upsert.run(domain, p.id, p.mode, JSON.stringify(p.mx), p.maxAgeSeconds, clock.nowMs(), p.expiresAtMs);
    },
  };
}

/**
 * The retention purge: deletes policies that expired before the cutoff (one that expired
 * is never applied; a domain that still publishes one gets it fetched again). The table
 * is not in expiry order (a refresh rewrites a row in place), so the walk covers all of
 * it, a window at a time; it holds a row per recipient domain that has a policy.
 */
export function createStsPurge(store: Store): Purge {
  const db = store.logDb;
  const window = db.query<WindowRow, [number, number]>(
    "SELECT rowid, expires_at AS at, 0 AS keep FROM mta_sts_policies WHERE rowid > ? ORDER BY rowid LIMIT ?",
  );
  const remove = db.query("DELETE FROM mta_sts_policies WHERE rowid IN (SELECT value FROM json_each(?))");
  return rowidPurge(db, window, (rowids) => remove.run(rowids), false);
}
