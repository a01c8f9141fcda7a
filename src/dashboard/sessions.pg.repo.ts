// SQL for dashboard sessions on PostgreSQL: the SessionRepo port (sessions.port.ts).
//
// The pattern for engine-neutral repositories (issue 21), which every feature repeats:
// - the feature declares its port (here sessions.port.ts): Promise-returning methods in
//   the feature's own nouns, nothing of either engine;
// - one file per engine implements it: <name>.repo.ts on SQLite (Store, prepared
//   statements), <name>.pg.repo.ts on PostgreSQL (Bun's SQL client, tagged templates, so
//   every value is a bound parameter: no SQL is ever built from strings). Both keep the
//   same SQL semantics on the same schema (schema-parity.test.ts keeps the two in step);
// - values are converted in the repository: PostgreSQL's BIGINT comes back as a string
//   (pgInteger), 0/1 flags become booleans (pgFlag), so callers cannot tell the engines apart;
// - one contract test (test/dashboard/sessions-repo.contract.test.ts) runs the same cases
//   on both engines, a real SQLite file and a real PostgreSQL, and fails when they diverge.
import type { SQL } from "bun";
import { pgFlag, pgInteger } from "../store/pg-values.ts";
import type { DashboardSession } from "./session.ts";
import type { SessionRepo } from "./sessions.port.ts";

interface Row {
  id_hash: string;
  account_id: string;
  admin: number;
  token_hash: string;
  /** BIGINT: a string from Bun's SQL client (a bigint with `bigint: true`). */
  created_at: string | bigint;
  expires_at: string | bigint;
  last_seen_at: string | bigint;
}

const fromRow = (r: Row): DashboardSession => ({
  idHash: r.id_hash,
  accountId: r.account_id,
  admin: pgFlag(r.admin, "dashboard_sessions.admin"),
  tokenHash: r.token_hash,
  createdAtMs: pgInteger(r.created_at, "dashboard_sessions.created_at"),
  expiresAtMs: pgInteger(r.expires_at, "dashboard_sessions.expires_at"),
  lastSeenAtMs: pgInteger(r.last_seen_at, "dashboard_sessions.last_seen_at"),
});

export function createPgSessionRepo(sql: SQL): SessionRepo {
  return {
    async create(s) {
      await sql`INSERT INTO dashboard_sessions (id_hash, account_id, admin, token_hash, created_at, expires_at, last_seen_at)
        VALUES (${s.idHash}, ${s.accountId}, ${s.admin ? 1 : 0}, ${s.tokenHash}, ${s.createdAtMs}, ${s.expiresAtMs}, ${s.lastSeenAtMs})`;
    },
    async find(idHash) {
      const rows: Row[] = await sql`SELECT * FROM dashboard_sessions WHERE id_hash = ${idHash}`;
      return rows[0] ? fromRow(rows[0]) : null;
    },
    async touch(idHash, nowMs) {
      await sql`UPDATE dashboard_sessions SET last_seen_at = ${nowMs} WHERE id_hash = ${idHash}`;
    },
    async remove(idHash) {
      await sql`DELETE FROM dashboard_sessions WHERE id_hash = ${idHash}`;
    },
    async removeExpired(nowMs) {
      const result: { count: number } = await sql`DELETE FROM dashboard_sessions WHERE expires_at <= ${nowMs}`;
      return result.count;
    },
  };
}
