// `postroom tls status` runs in its own process beside the server: it opens the store for
// itself (only in ACME mode, where the certificate and the last order failure live there):
// SQLite in data_dir, or the PostgreSQL that store.url names, with this node's secrets key.
import { SQL } from "bun";
import type { Config } from "../config/config.ts";
import { loadOrCreateKey, secretBox } from "../lib/secret-key.ts";
import { postgresConnectError } from "../store/postgres-migrate.ts";
import { openStore, SECRETS_KEY } from "../store/store.ts";
import { parsePostgresUrl } from "../config/store-url.ts";
import { loadConfigured } from "./sources.ts";
import { tlsStatusText } from "./status-text.ts";
import { TlsStore } from "./tls-store.port.ts";
import { createTlsStateRepo, sqliteTlsStore } from "./tls-store.repo.ts";
import { pgDb } from "../store/db/pg-db.ts";

export async function tlsStatusCommand(config: Config, nowMs: number): Promise<{ text: string; ok: boolean }> {
  let close: () => Promise<void> = async () => {};
  const open = (): TlsStore => {
    const url = config.store.postgresUrl;
    if (url === null) {
      const store = openStore(config.dataDir);
      close = async () => store.close();
      return sqliteTlsStore(store, () => nowMs);
    }
    const sql = new SQL(url, { max: 1, connectionTimeout: Math.ceil(config.store.connectTimeoutMs / 1000) });
    close = () => sql.close();
    return new TlsStore(
      createTlsStateRepo(pgDb(sql)),
      secretBox(() => loadOrCreateKey(config.dataDir, SECRETS_KEY)),
      () => nowMs,
    );
  };
  try {
    const loaded = await loadConfigured(config, open, nowMs);
    return tlsStatusText(config, loaded, nowMs);
  } catch (err) {
    // The database unreachable or refusing the login: one line naming it, not a stack trace.
    const at = config.store.postgresUrl === null ? null : parsePostgresUrl(config.store.postgresUrl);
    if (!at || (err as Error).name !== "PostgresError") throw err;
    return { text: `problem: ${(await postgresConnectError(err, at, config.store.connectTimeoutMs)).message}`, ok: false };
  } finally {
    await close();
  }
}
