// An open store engine, as the features build their repositories from it: the Db every
// engine-neutral repository takes (src/store/db/db.ts), and the engine's own handle for
// the few repositories whose mechanics differ by engine (the queue's claims, the status
// journal, the outbox, the purges, rate limits). The store knows no feature: src/repos/
// builds the repositories from an Engine.
import type { SQL } from "bun";
import type { SecretBox } from "../../lib/secret-key.ts";
import type { Db } from "../db/db.ts";
import type { ChannelSubscription } from "../pg-notify.ts";
import type { Store } from "../store.ts";

export type EngineKind = "sqlite" | "postgres";

/** Engine.listen: hears `channel`; `onResubscribe` after the listening connection came back (notices may have been lost). */
export type Listen = (channel: string, onMessage: (payload: string) => void, onResubscribe: () => void) => Promise<ChannelSubscription>;

interface EngineBase {
  /** For what must be durable before an answer (mail, settings). */
  readonly db: Db;
  /**
   * For what may take the cheaper durable path (claims, logs): SQLite's connection with
   * synchronous=NORMAL, PostgreSQL's pool with synchronous_commit=off (the main pool when
   * store.max_connections is 2).
   */
  readonly logDb: Db;
  /** Encrypts the secrets the repositories keep (data_dir/keys/secrets.key, the same on every node). */
  readonly secrets: SecretBox;
  /**
   * Hears what other nodes announce on `channel` (PostgreSQL LISTEN, pg-notify.ts);
   * `onResubscribe` after the listening connection came back (notices may have been lost).
   * On SQLite one process writes: there is nothing to hear.
   */
  readonly listen: Listen;
  /** Throws unless the store took a durable write lately (for /healthz). */
  checkWritable(nowMs: number): void;
  /** Closes the connections; whatever uses them is stopped first. */
  close(): Promise<void>;
}

export interface SqliteEngine extends EngineBase {
  readonly kind: "sqlite";
  readonly store: Store;
  readonly dataDir: string;
}

export interface PostgresEngine extends EngineBase {
  readonly kind: "postgres";
  /** The pool, NUL-guarded (pg-nul-guard.ts). */
  readonly sql: SQL;
  /** logDb's pool: commits that do not wait for the WAL flush (leases, logs); `sql` itself at max_connections = 2. */
  readonly logSql: SQL;
}

export type Engine = SqliteEngine | PostgresEngine;
