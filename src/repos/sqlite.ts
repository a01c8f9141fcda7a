// The repositories on the embedded SQLite store in data_dir: one process holds it (the
// data-dir lock), so caches cleared by local writes and in-memory claims are enough.
// Here: what is built on SQLite's own handle; the engine-neutral rest is common.ts's.
import { createOutboxRepo } from "../events/outbox.repo.ts";
import { LocalAttachmentStore } from "../inbound/attachments/attachment-files.ts";
import { createStatusRepo } from "../inbound/statuses/statuses.repo.ts";
import { PurgeThread } from "../jobs/purge-thread.ts";
import type { Logger } from "../lib/logger.ts";
import { RateLimiter } from "../auth/rate-limit.ts";
import { createOutboundRepo } from "../outbound/queue/queue.repo.ts";
import { queuePorts } from "../outbound/queue/wiring.ts";
import { SearchThread } from "../search/search-thread.ts";
import { idempotencyAtStart } from "../outbound/sending/idempotency.repo.ts";
import type { SqliteEngine } from "../store/engine/engine.ts";
import type { Store } from "../store/store.ts";
import { commonRepos } from "./common.ts";
import type { RepoHooks, Repos } from "./repos.ts";

export interface SqliteRepos extends Repos {
  readonly engine: "sqlite";
  /** The SQLite store itself, for what runs only on it (the retention purge's thread, tests). */
  readonly store: Store;
}

export async function sqliteRepos(engine: SqliteEngine, hooks: RepoHooks, logger: Logger): Promise<SqliteRepos> {
  const { store, dataDir } = engine;
  // Searches of E6 and E12 run on a thread with a read-only connection (search-thread.ts).
  const searchThread = new SearchThread(store.path, logger.child({ component: "search" }));
  const statuses = createStatusRepo(store, hooks.onStatusStoreFailed, searchThread);
  const purgeThread = new PurgeThread(dataDir, logger.child({ component: "retention" }));
  // One process holds the data dir: a claim without an answer belongs to a request that is gone.
  const idempotency = await idempotencyAtStart(engine.logDb);
  const common = await commonRepos(engine, hooks);
  return {
    idempotency,
    engine: "sqlite",
    ...common.repos,
    store,
    statuses,
    outbound: createOutboundRepo(store, queuePorts(store), hooks.onEvents, searchThread),
    outbox: createOutboxRepo(store),
    retention: { purges: purgeThread.purges(), close: () => purgeThread.close() },
    rateLimits: { calls: new RateLimiter(), dashboard: undefined },
    localAttachments: (opts) => new LocalAttachmentStore(dataDir, opts.key, opts.publicUrl),
    checkWritable: (nowMs) => engine.checkWritable(nowMs),
    close: async () => {
      searchThread.close();
      statuses.close();
      await common.stop();
      await engine.close();
    },
  };
}
