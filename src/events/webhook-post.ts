// One POST made to an account's webhook: the receiver's status and the first bytes of its
// answer, for the dashboard's webhook page. Stored by webhook-posts.repo.ts.
export interface WebhookPost {
  id: string;
  outboundAccountId: string;
  /** The webhook-id header: a retry posts the same batch again under the same id. */
  batchId: string;
  events: number;
  /** A test POST from the dashboard (one sample event), not a batch of the outbox. */
  test: boolean;
  /** The receiver's HTTP status, or null when it gave none (timeout, refused connection...). */
  status: number | null;
  /** What went wrong, in words or as the receiver's first bytes; "" for a 2xx. */
  problem: string;
  durationMs: number;
  createdAtMs: number;
}
