// SQL for dashboard sessions on SQLite: the SessionRepo port (sessions.port.ts). Its
// statements run synchronously; the methods are async only to share the port with
// PostgreSQL (sessions.pg.repo.ts).
import type { Store } from "../store/store.ts";
import type { DashboardSession } from "./session.ts";
import type { SessionRepo } from "./sessions.port.ts";

interface Row {
  id_hash: string;
  account_id: string;
  admin: number;
  token_hash: string;
  created_at: number;
  expires_at: number;
  last_seen_at: number;
}

export function createSessionRepo(store: Store): SessionRepo {
  const db = store.db;
  const insert = db.query(
    "INSERT INTO dashboard_sessions (id_hash, account_id, admin, token_hash, created_at, expires_at, last_seen_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
  );
  const select = db.query<Row, [string]>("SELECT * FROM dashboard_sessions WHERE id_hash = ?");
  const update = db.query("UPDATE dashboard_sessions SET last_seen_at = ? WHERE id_hash = ?");
  const del = db.query("DELETE FROM dashboard_sessions WHERE id_hash = ?");
  const delExpired = db.query("DELETE FROM dashboard_sessions WHERE expires_at <= ?");
  return {
    create: async (s) => void insert.run(s.idHash, s.accountId, s.admin ? 1 : 0, s.tokenHash, s.createdAtMs, s.expiresAtMs, s.lastSeenAtMs),
    async find(idHash): Promise<DashboardSession | null> {
      const r = select.get(idHash);
      return r
        ? {
            idHash: r.id_hash,
            accountId: r.account_id,
            admin: r.admin === 1,
            tokenHash: r.token_hash,
            createdAtMs: r.created_at,
            expiresAtMs: r.expires_at,
            lastSeenAtMs: r.last_seen_at,
          }
        : null;
    },
    touch: async (idHash, nowMs) => void update.run(nowMs, idHash),
    remove: async (idHash) => void del.run(idHash),
    removeExpired: async (nowMs) => delExpired.run(nowMs).changes,
  };
}
