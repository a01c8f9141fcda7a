// Opens the store that store.url names: "" is SQLite in data_dir, a postgres:// URL a
// PostgreSQL that other nodes may share.
import type { Config } from "../../config/config.ts";
import type { Logger } from "../../lib/logger.ts";
import { openPostgresRepos } from "./postgres.ts";
import type { RepoHooks, Repos } from "./repos.ts";
import { openSqliteRepos } from "./sqlite.ts";

export async function openRepos(config: Config, logger: Logger, hooks: RepoHooks): Promise<Repos> {
  const url = config.store.postgresUrl;
  if (url === null) return openSqliteRepos(config.dataDir, hooks, logger);
  const { connectTimeoutMs, maxConnections } = config.store;
  return openPostgresRepos(
    { url, dataDir: config.dataDir, connectTimeoutMs, maxConnections, nodeId: config.cluster.nodeId },
    hooks,
    logger,
  );
}
