// Opens the store that store.url names (src/store/engine/open.ts) and builds every
// repository on it, each with its feature's own factory.
import type { Config } from "../config/config.ts";
import type { Logger } from "../lib/logger.ts";
import { openEngine } from "../store/engine/open.ts";
import { postgresRepos } from "./postgres.ts";
import type { RepoHooks, Repos } from "./repos.ts";
import { sqliteRepos } from "./sqlite.ts";

export async function openRepos(config: Config, logger: Logger, hooks: RepoHooks): Promise<Repos> {
  const engine = await openEngine(config, logger);
  try {
    return engine.kind === "sqlite" ? await sqliteRepos(engine, hooks, logger) : await postgresRepos(engine, hooks, logger);
  } catch (err) {
    await engine.close();
    throw err;
  }
}
