// Retention: how long the rows of each table that grows with traffic are kept (the
// [retention] section of the config), and which of them the purge may delete now.
import type { Config } from "../config/config.ts";

export type RetentionSettings = Config["retention"];
/** The tables the purge walks, named as their keys in [retention]. */
export type RetentionTable = keyof RetentionSettings["keepMs"];

/**
 * The order of a run: messages before their bodies and events, so that a message's purge
 * takes its body and events with it and the later walks find fewer rows.
 */
export const RETENTION_TABLES: readonly RetentionTable[] = [
  "incoming_statuses",
  "messages",
  "bodies",
  "events",
  "webhook_outbox",
  "domain_events",
  "mta_sts_policies",
  "stats",
  "idempotency_keys",
  "webhook_posts",
];

/**
 * For each table, the time before which its rows may be deleted at `nowMs` (rows created
 * before it; for MTA-STS policies, expired before it), or null when the table is kept
 * forever ("off"). Rows still needed are kept whatever the cutoff (each repository's purge
 * says which).
 */
export function purgeCutoffs(nowMs: number, keepMs: RetentionSettings["keepMs"]): Record<RetentionTable, number | null> {
  const cutoffs = {} as Record<RetentionTable, number | null>;
  for (const table of RETENTION_TABLES) {
    const keep = keepMs[table];
    cutoffs[table] = keep === null ? null : nowMs - keep;
  }
  return cutoffs;
}
