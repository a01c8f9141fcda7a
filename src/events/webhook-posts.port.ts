// The port through which webhook POSTs are recorded for the dashboard's webhook page,
// whatever the engine: webhook-posts.repo.ts implements it once for SQLite and
// PostgreSQL, and one contract test
// (test/events/webhook-posts-repo.contract.test.ts) runs the same cases on both.
import type { Page, PageRequest } from "../store/paging.ts";
import type { WebhookPost } from "./webhook-post.ts";

/** Promise-returning on every engine: PostgreSQL answers over a socket, SQLite at once. */
export interface WebhookPostRepo {
  /** Stores a POST under a new id. */
  record(post: Omit<WebhookPost, "id">): Promise<void>;
  /** An outbound account's POSTs, newest first (by time, then id). */
  list(outboundAccountId: string, page: PageRequest): Promise<Page<WebhookPost>>;
}
