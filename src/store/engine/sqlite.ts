// The embedded SQLite store in data_dir as an Engine: one process holds it (the data-dir
// lock), so caches cleared by local writes and in-memory claims are enough, and there is
// nothing to listen to.
import type { Logger } from "../../lib/logger.ts";
import { openStore } from "../store.ts";
import type { SqliteEngine } from "./engine.ts";

export function openSqliteEngine(dataDir: string, logger: Logger): SqliteEngine {
  const store = openStore(dataDir, undefined, logger);
  return {
    kind: "sqlite",
    store,
    dataDir,
    db: store.main,
    logDb: store.log,
    secrets: store.secrets,
    listen: async () => ({ stop: async () => {} }),
    checkWritable: (nowMs) => store.checkWritable(nowMs),
    close: async () => store.close(),
  };
}
