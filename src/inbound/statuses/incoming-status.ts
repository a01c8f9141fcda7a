// An incoming status: what became of one recipient of one received message (E6,
// docs/receiving.md, Incoming statuses). Journaled by status-journal.ts, stored by
// statuses.repo.ts.
import type { StatusCategory } from "../targets/target-reply.ts";

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
}
