// SQL for the record of webhook POSTs on PostgreSQL: the WebhookPostRepo port
// (webhook-posts.port.ts), the same semantics as webhook-posts.repo.ts on SQLite.
import type { SQL } from "bun";
import { newId16 } from "../lib/ids.ts";
import { toPage } from "../store/paging.ts";
import { pgNewestFirst } from "../store/pg-paging.ts";
import { pgFlag, pgInteger } from "../store/pg-values.ts";
import type { WebhookPost } from "./webhook-post.ts";
import type { WebhookPostRepo } from "./webhook-posts.port.ts";
import { pgTablePurge } from "../store/pg-purge-window.ts";
import type { Purge } from "../store/purge-window.ts";

interface Row {
  id: string;
  outbound_account_id: string;
  batch_id: string;
  /** BIGINT: a string from Bun's SQL client. */
  events: string | bigint;
  test: number;
  status: number | null;
  problem: string;
  duration_ms: string | bigint;
  created_at: string | bigint;
}

const fromRow = (r: Row): WebhookPost => ({
  id: r.id,
  outboundAccountId: r.outbound_account_id,
  batchId: r.batch_id,
  events: pgInteger(r.events, "webhook_posts.events"),
  test: pgFlag(r.test, "webhook_posts.test"),
  status: r.status === null ? null : pgInteger(r.status, "webhook_posts.status"),
  problem: r.problem,
  durationMs: pgInteger(r.duration_ms, "webhook_posts.duration_ms"),
  createdAtMs: pgInteger(r.created_at, "webhook_posts.created_at"),
});

export function createPgWebhookPostRepo(sql: SQL): WebhookPostRepo {
  return {
    async record(p) {
      await sql`INSERT INTO webhook_posts (id, outbound_account_id, batch_id, events, test, status, problem, duration_ms, created_at)
        VALUES (${newId16()}, ${p.outboundAccountId}, ${p.batchId}, ${p.events}, ${p.test ? 1 : 0}, ${p.status}, ${p.problem}, ${p.durationMs}, ${p.createdAtMs})`;
    },
    async list(outboundAccountId, page) {
      const { where, tail } = pgNewestFirst(sql, page);
      const rows: Row[] = await sql`SELECT id, outbound_account_id, batch_id, events, test, status, problem, duration_ms, created_at
        FROM webhook_posts WHERE outbound_account_id = ${outboundAccountId} ${where} ${tail}`;
      return toPage(rows.map(fromRow), page.limit);
    },
  };
}

/** The retention purge (retention.webhook_posts): POSTs made before the cutoff. */
export const createPgWebhookPostPurge = (sql: SQL): Purge => pgTablePurge(sql, "webhook_posts", "created_at");
