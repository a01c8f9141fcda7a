// An event of a sent message's recipient (registration, dispatch, delivery, bounce,
// open, click...): what E12/E13 list and what the webhook reports (docs/webhooks.md).
// Stored by events.repo.ts.
import type { EventKind } from "./kinds.ts";

export interface MessageEvent {
  id: string;
  messageId: string;
  recipientId: string;
  kind: EventKind;
  details: Record<string, unknown>;
  createdAtMs: number;
  seq: number;
}

export type NewEvent = Pick<MessageEvent, "messageId" | "recipientId" | "kind" | "details" | "createdAtMs">;
