// The port through which the dashboard keeps its sessions, whatever the engine:
// sessions.repo.ts implements it once for SQLite and PostgreSQL, and one contract test
// (test/dashboard/sessions-repo.contract.test.ts) runs the same cases on both. Only
// the SHA-256 of a session's secret is stored, so a copy of the database signs nobody in.
import { createHash } from "node:crypto";
import type { DashboardSession } from "./session.ts";

/** Promise-returning on every engine: PostgreSQL answers over a socket, SQLite at once. */
export interface SessionRepo {
  create(session: DashboardSession): Promise<void>;
  find(idHash: string): Promise<DashboardSession | null>;
  touch(idHash: string, nowMs: number): Promise<void>;
  remove(idHash: string): Promise<void>;
  /** Deletes sessions past their lifetime (expires_at <= nowMs); returns how many. */
  removeExpired(nowMs: number): Promise<number>;
}

/** The stored form of a session secret. */
export const sessionIdHash = (secret: string): string => createHash("sha256").update(secret, "utf8").digest("hex");
