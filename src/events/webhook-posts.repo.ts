// SQL for the record of webhook POSTs on SQLite: one row per POST, with the
// receiver's status and the first bytes of a non-2xx answer, for the dashboard.
// createWebhookPostRepo is the WebhookPostRepo port (webhook-posts.port.ts), async only to
// share it with PostgreSQL (webhook-posts.pg.repo.ts), which has its own purge.
import { newId16 } from "../lib/ids.ts";
import { newestFirst, toPage, type Page } from "../store/paging.ts";
import { rowidPurge, type Purge, type WindowRow } from "../store/purge-window.ts";
import type { Store } from "../store/store.ts";
import type { WebhookPost } from "./webhook-post.ts";
import type { WebhookPostRepo } from "./webhook-posts.port.ts";

interface Row {
  id: string;
  outbound_account_id: string;
  batch_id: string;
  events: number;
  test: number;
  status: number | null;
  problem: string;
  duration_ms: number;
  created_at: number;
}

export function createWebhookPostRepo(store: Store): WebhookPostRepo {
  const { db } = store;
  const insert = db.query(
    "INSERT INTO webhook_posts (id, outbound_account_id, batch_id, events, test, status, problem, duration_ms, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
  );
  return {
    record: async (p) =>
      void insert.run(
        newId16(),
        p.outboundAccountId,
        p.batchId,
        p.events,
        p.test ? 1 : 0,
        p.status,
        p.problem,
        p.durationMs,
        p.createdAtMs,
      ),
    async list(outboundAccountId, page): Promise<Page<WebhookPost>> {
      const params: unknown[] = [outboundAccountId];
      const { where, tail } = newestFirst(page, params);
      const rows = db
        .query(`SELECT * FROM webhook_posts WHERE outbound_account_id = ?${where}${tail}`)
        .all(...(params as never[])) as Row[];
      return toPage(
        rows.map((r) => ({
          id: r.id,
          outboundAccountId: r.outbound_account_id,
          batchId: r.batch_id,
          events: r.events,
          test: r.test === 1,
          status: r.status,
          problem: r.problem,
          durationMs: r.duration_ms,
          createdAtMs: r.created_at,
        })),
        page.limit,
      );
    },
  };
}

/** The retention purge (retention.webhook_posts): POSTs made before the cutoff. */
export function createWebhookPostPurge(store: Store): Purge {
  const db = store.logDb;
  const window = db.query<WindowRow, [number, number]>(
    "SELECT rowid, created_at AS at, 0 AS keep FROM webhook_posts WHERE rowid > ? ORDER BY rowid LIMIT ?",
  );
  const remove = db.query("DELETE FROM webhook_posts WHERE rowid IN (SELECT value FROM json_each(?))");
  return rowidPurge(db, window, (rowids) => remove.run(rowids));
}
