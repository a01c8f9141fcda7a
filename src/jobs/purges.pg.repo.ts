// The retention purges of the tables whose repositories are written once for both engines,
// on PostgreSQL (purges.repo.ts says why a purge is engine mechanics): the walk goes by the
// table's identity column `rowid` on the event loop, and each window is deleted in one
// statement that checks the age and `keep` again (pg-purge-window.ts).
import type { SQL } from "bun";
import { pgTablePurge } from "../store/pg-purge-window.ts";
import type { Purge } from "../store/purge-window.ts";

/** createStsPurge on PostgreSQL; the delete checks the expiry again, so a policy refreshed meanwhile stays. */
export const createPgStsPurge = (sql: SQL): Purge => pgTablePurge(sql, "mta_sts_policies", "expires_at", undefined, false);

/** createIdempotencyPurge on PostgreSQL. */
export const createPgIdempotencyPurge = (sql: SQL): Purge => pgTablePurge(sql, "idempotency_keys", "created_at", sql`answer IS NULL`);

/** createWebhookPostPurge on PostgreSQL. */
export const createPgWebhookPostPurge = (sql: SQL): Purge => pgTablePurge(sql, "webhook_posts", "created_at");
