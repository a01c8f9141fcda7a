// Opens the store that store.url names: "" is SQLite in data_dir, a postgres:// URL a
// PostgreSQL that other nodes may share.
import type { Config } from "../../config/config.ts";
import type { Logger } from "../../lib/logger.ts";
import type { Engine } from "./engine.ts";
import { openPostgresEngine } from "./postgres.ts";
import { openSqliteEngine } from "./sqlite.ts";

export async function openEngine(config: Config, logger: Logger): Promise<Engine> {
  const url = config.store.postgresUrl;
  if (url === null) return openSqliteEngine(config.dataDir, logger);
  const { connectTimeoutMs, maxConnections } = config.store;
  return openPostgresEngine({ url, dataDir: config.dataDir, connectTimeoutMs, maxConnections, nodeId: config.cluster.nodeId }, logger);
}
