// SQL for dashboard sessions: the SessionRepo port (sessions.port.ts), written once for
// both engines against a Db (src/store/db/db.ts). The contract test
// (test/dashboard/sessions-repo.contract.test.ts) runs the same cases on SQLite and
// PostgreSQL. docs/architecture.md, "Repositories: one SQL per noun", shows the pattern.
import type { Db } from "../store/db/db.ts";
import { toFlag, toInt } from "../store/db/dialect.ts";
import { sql } from "../store/db/sql.ts";
import type { DashboardSession } from "./session.ts";
import type { SessionRepo } from "./sessions.port.ts";

interface Row {
  id_hash: string;
  account_id: string;
  admin: unknown;
  token_hash: string;
  created_at: unknown;
  expires_at: unknown;
  last_seen_at: unknown;
}

const fromRow = (r: Row): DashboardSession => ({
  idHash: r.id_hash,
  accountId: r.account_id,
  admin: toFlag(r.admin, "dashboard_sessions.admin"),
  tokenHash: r.token_hash,
  createdAtMs: toInt(r.created_at, "dashboard_sessions.created_at"),
  expiresAtMs: toInt(r.expires_at, "dashboard_sessions.expires_at"),
  lastSeenAtMs: toInt(r.last_seen_at, "dashboard_sessions.last_seen_at"),
});

export function createSessionRepo(db: Db): SessionRepo {
  return {
    async create(s) {
      await db.run(sql`INSERT INTO dashboard_sessions (id_hash, account_id, admin, token_hash, created_at, expires_at, last_seen_at)
        VALUES (${s.idHash}, ${s.accountId}, ${s.admin}, ${s.tokenHash}, ${s.createdAtMs}, ${s.expiresAtMs}, ${s.lastSeenAtMs})`);
    },
    async find(idHash) {
      const row = await db.get<Row>(sql`SELECT * FROM dashboard_sessions WHERE id_hash = ${idHash}`);
      return row ? fromRow(row) : null;
    },
    async touch(idHash, nowMs) {
      await db.run(sql`UPDATE dashboard_sessions SET last_seen_at = ${nowMs} WHERE id_hash = ${idHash}`);
    },
    async remove(idHash) {
      await db.run(sql`DELETE FROM dashboard_sessions WHERE id_hash = ${idHash}`);
    },
    async removeExpired(nowMs) {
      return (await db.run(sql`DELETE FROM dashboard_sessions WHERE expires_at <= ${nowMs}`)).changes;
    },
  };
}
