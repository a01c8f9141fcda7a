// The outgoing queue's nouns: a message accepted for delivery, its recipients, and what an
// attempt changes. Defined here, apart from the SQL (queue.repo.ts), so that the API,
// the delivery worker and the repositories all import them from the model.
import type { LifecycleKind } from "../../events/kinds.ts";
import type { SuppressionOrder } from "../suppressions/suppression.ts";
import type { Tracking } from "../tracking/personalize.ts";

export type Priority = "standard" | "priority" | "digest";
export type RecipientType = "to" | "cc" | "bcc";

export interface OutboundMessage {
  id: string;
  accountId: string;
  outboundAccountId: string;
  from: string;
  subject: string | null;
  messageId: string;
  to: string[];
  cc: string[];
  tags: string[];
  testMode: boolean;
  priority: Priority;
  sizeBytes: number;
  /** Open/click tracking and List-Unsubscribe, as the account had them when it was accepted. */
  tracking: Tracking;
  createdAtMs: number;
  /** When its recipients are first attempted (E11's send_at); null or absent: at once. */
  sendAtMs?: number | null;
  /** The sender's metadata (E11's metadata): returned by E12/E13, in each webhook event. */
  metadata?: Record<string, string>;
}

/** A message accepted before tracking existed, or whose account has none. */
export const NO_TRACKING: Tracking = { opens: false, clicks: false, unsubscribe: { url: null, mailto: null } };

export type RecipientState = "queued" | "held" | "done";

export interface OutboundRecipient {
  id: string;
  messageId: string;
  position: number;
  email: string;
  domain: string;
  type: RecipientType;
  status: LifecycleKind;
  /** queued: waiting for an attempt; held: an operator holds it (never attempted until released); done: ended. */
  state: RecipientState;
  lane: number;
  attempts: number;
  firstAttemptAtMs: number | null;
  nextAttemptAtMs: number;
}

/** A recipient's new queue state after an attempt (or a decision without one). */
export interface RecipientUpdate {
  status: LifecycleKind;
  state: "queued" | "done";
  attempts: number;
  firstAttemptAtMs: number | null;
  nextAttemptAtMs: number;
  /** The address goes on the suppression list with the outcome (a hard bounce: suppressionFor). */
  suppress?: SuppressionOrder | null;
}

export interface ClaimedRecipient {
  recipient: OutboundRecipient;
  message: OutboundMessage;
}
