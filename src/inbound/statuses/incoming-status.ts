// An incoming status: what became of one recipient of one received message (E6,
// docs/receiving.md, Incoming statuses). Journaled by status-journal.ts, stored by
// statuses.repo.ts.
import type { StatusCategory } from "../targets/target-reply.ts";

/** (beyond) What became of the message for this recipient, as E6 shows it in `state`. */
export type DeliveryState = "delivered" | "rejected" | "deferred" | "queued" | "expired";

export interface IncomingStatus {
  id: string;
  accountId: string;
  addressId: string;
  messageId: string | null;
  mailFrom: string;
  rcptTo: string;
  subject: string | null;
  status: string;
  statusCategory: StatusCategory;
  tls: string | null;
  sizeBytes: number | null;
  remoteIp: string | null;
  response: string | null;
  /** The X-Postroom-Message-Id of the POST the status records; null when none was made. */
  postroomMessageId: string | null;
  /** (beyond) The signed URL of the stored message (envelope.store_url), when the address keeps messages. */
  storeUrl?: string | null;
  /** (beyond) The envelope posted, as JSON, when the message was kept: with it the payload can be shown again. */
  envelope?: string | null;
  createdAtMs: number;
  /** (beyond) Set by the queue (on_target_failure = "queue") and the spam check; null on statuses from before, read by stateOf. */
  state?: DeliveryState | null;
  /** (beyond) POSTs made so far; null on statuses from before. */
  attempts?: number | null;
  /** (beyond) When a queued message is posted again; null otherwise. */
  nextAttemptAtMs?: number | null;
}

/** The state of a status: as recorded, or (statuses from before) as its category says. */
export function stateOf(s: Pick<IncomingStatus, "state" | "statusCategory">): DeliveryState {
  if (s.state) return s.state;
  return s.statusCategory === "successful" ? "delivered" : s.statusCategory === "rejected" ? "rejected" : "deferred";
}

/** What the queue changes on the statuses of a message it posted again. */
export interface StatusChange {
  status: string;
  statusCategory: IncomingStatus["statusCategory"];
  response: string | null;
  state: DeliveryState;
  attempts: number;
  nextAttemptAtMs: number | null;
}
