// Deleting suppressions that have expired (a hard bounce's, outbound.suppression_ttl after
// it). An expired entry already stops applying the moment it expires (suppressedAmong reads
// expires_at); this job only keeps the table from growing with them. In batches, so one
// run never holds the store's write lock for long.
import type { Job } from "../../lib/feature.ts";
import type { Logger } from "../../lib/logger.ts";
import type { SuppressionRepo } from "./suppressions.port.ts";

/** Entries deleted per statement. */
export const SUPPRESSION_PURGE_BATCH_ROWS = 1000;

export function suppressionExpiryJob(repo: Pick<SuppressionRepo, "purgeExpired">, nowMs: () => number, logger: Logger): Job {
  return {
    name: "purge-expired-suppressions",
    every: "0 7 * * * *",
    oncePerCluster: true,
    async run() {
      let deleted = 0;
      for (;;) {
        const n = await repo.purgeExpired(nowMs(), SUPPRESSION_PURGE_BATCH_ROWS);
        deleted += n;
        if (n < SUPPRESSION_PURGE_BATCH_ROWS) break;
      }
      if (deleted > 0) logger.info("expired suppressions deleted", { count: deleted });
      return deleted;
    },
  };
}
