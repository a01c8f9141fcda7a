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
}

export interface Batch {
  id: string;
  attempts: number;
  events: OutboxEvent[];
}
