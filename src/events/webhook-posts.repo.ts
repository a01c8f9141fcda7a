// SQL for the record of webhook POSTs: one row per POST, with the receiver's status and
// the first bytes of a non-2xx answer, for the dashboard. createWebhookPostRepo is the
// WebhookPostRepo port (webhook-posts.port.ts), written once for both engines against a
// Db; its retention purge is src/jobs/purges.repo.ts's.
import { newId16 } from "../lib/ids.ts";
import type { Db } from "../store/db/db.ts";
import { toFlag, toInt, toIntOrNull } from "../store/db/dialect.ts";
import { newestFirst } from "../store/db/paging.ts";
import { sql } from "../store/db/sql.ts";
import { toPage } from "../store/paging.ts";
import type { WebhookPost } from "./webhook-post.ts";
import type { WebhookPostRepo } from "./webhook-posts.port.ts";

interface Row {
  id: string;
  outbound_account_id: string;
  batch_id: string;
  events: unknown;
  test: unknown;
  status: unknown;
  problem: string;
  duration_ms: unknown;
  created_at: unknown;
}

const fromRow = (r: Row): WebhookPost => ({
  id: r.id,
  outboundAccountId: r.outbound_account_id,
  batchId: r.batch_id,
  events: toInt(r.events, "webhook_posts.events"),
  test: toFlag(r.test, "webhook_posts.test"),
  status: toIntOrNull(r.status, "webhook_posts.status"),
  problem: r.problem,
  durationMs: toInt(r.duration_ms, "webhook_posts.duration_ms"),
  createdAtMs: toInt(r.created_at, "webhook_posts.created_at"),
});

export function createWebhookPostRepo(db: Db): WebhookPostRepo {
  return {
    async record(p) {
      await db.run(sql`INSERT INTO webhook_posts (id, outbound_account_id, batch_id, events, test, status, problem, duration_ms, created_at)
        VALUES (${newId16()}, ${p.outboundAccountId}, ${p.batchId}, ${p.events}, ${p.test}, ${p.status}, ${p.problem}, ${p.durationMs}, ${p.createdAtMs})`);
    },
    async list(outboundAccountId, page) {
      const { where, tail } = newestFirst(page);
      const rows = await db.all<Row>(sql`SELECT id, outbound_account_id, batch_id, events, test, status, problem, duration_ms, created_at
        FROM webhook_posts WHERE outbound_account_id = ${outboundAccountId} ${where} ${tail}`);
      return toPage(rows.map(fromRow), page.limit);
    },
  };
}
