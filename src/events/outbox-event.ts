// An event waiting in the webhook outbox, and a batch of them for one POST
// (docs/webhooks.md). Stored by outbox.repo.ts.
export interface OutboxEvent {
  id: string;
  kind: string;
  recipient: string;
  messageId: string;
  outboundAccountId: string;
  accountId: string;
  createdAtMs: number;
  details: Record<string, unknown>;
  /** The message's metadata (E11's), carried in each of its events. */
  metadata?: Record<string, string>;
}

export interface Batch {
  id: string;
  attempts: number;
  events: OutboxEvent[];
}

/** The event's `metadata` from its message's column: none when the message has none (the hosted service's events have none). */
export function metadataOf(json: string | null): { metadata?: Record<string, string> } {
  if (json === null || json === "{}") return {};
  return { metadata: JSON.parse(json) };
}
