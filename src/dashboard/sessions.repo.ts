// SQL for dashboard sessions. Only the SHA-256 of a session's secret is
// stored, so a copy of the database signs nobody in.
import { createHash } from "node:crypto";
import type { Store } from "../store/store.ts";
import type { DashboardSession } from "./session.ts";

export interface SessionRepo {
  create(session: DashboardSession): void;
  find(idHash: string): DashboardSession | null;
  touch(idHash: string, nowMs: number): void;
  remove(idHash: string): void;
  /** Deletes sessions past their lifetime; returns how many. */
  removeExpired(nowMs: number): number;
}

/** The stored form of a session secret. */
export const sessionIdHash = (secret: string): string => createHash("sha256").update(secret, "utf8").digest("hex");

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
    create: (s) => void insert.run(s.idHash, s.accountId, s.admin ? 1 : 0, s.tokenHash, s.createdAtMs, s.expiresAtMs, s.lastSeenAtMs),
    find(idHash) {
      const r = select.get(idHash);
      return r
        ? { idHash: r.id_hash, accountId: r.account_id, admin: r.admin === 1, tokenHash: r.token_hash, createdAtMs: r.created_at, expiresAtMs: r.expires_at, lastSeenAtMs: r.last_seen_at }
        : null;
    },
    touch: (idHash, nowMs) => void update.run(nowMs, idHash),
    remove: (idHash) => void del.run(idHash),
    removeExpired: (nowMs) => delExpired.run(nowMs).changes,
  };
}
