// The port through which incoming statuses are kept, whatever the engine: SQLite
// (statuses.repo.ts: a per-node journal, then grouped commits) and PostgreSQL
// (statuses.pg.repo.ts: straight to the database, one transaction per recorded group). One
// contract test (test/inbound/statuses/statuses-repo.contract.test.ts) runs the same cases on both.
// Status IDs are random (newId16, 64 bits from crypto.getRandomValues), so nodes sharing a
// database make them without coordinating, as they do addresses and accounts.
import type { SearchTerm } from "../../lib/search-query.ts";
import type { Page, PageRequest } from "../../store/paging.ts";
import type { DeliveryState, IncomingStatus, StatusChange } from "./incoming-status.ts";
import type { StatusCategory } from "../targets/target-reply.ts";

export interface StatusRepo {
  /** Resolves once the rows survive a crash of the process (SQLite: journaled, stored shortly; PostgreSQL: committed). */
  record(rows: IncomingStatus[]): Promise<void>;
  /**
   * Newest first; a search reads at most `windowRows` statuses per request (paging.ts,
   * SearchWindow) and rejects with SearchTimeoutError (sliced-search.ts) after `timeoutMs`.
   */
  list(
    accountId: string,
    addressId: string,
    terms: readonly SearchTerm[],
    page: PageRequest,
    windowRows?: number,
    timeoutMs?: number,
  ): Promise<Page<IncomingStatus>>;
  /** Stores every status recorded so far in the database now (nothing to do where record commits). */
  flush(): Promise<void>;
  /** One status of an address, or null. */
  get(accountId: string, addressId: string, id: string): Promise<IncomingStatus | null>;
  /** (beyond) Changes the statuses `ids` of the account (a queued message posted again, docs/receiving.md). */
  update(accountId: string, ids: readonly string[], change: StatusChange): Promise<void>;
  /** Stores what is left and lets go (at shutdown). */
  close(): void;
}

export const STATUS_SEARCH_FIELDS = ["status", "status_category", "to", "from", "subject", "created_at", "x_postroom_message_id"] as const;

/** The column a search field reads (created_at is itself). */
export const FIELD_COLUMN: Record<string, string> = {
  to: "rcpt_to",
  from: "mail_from",
  subject: "subject",
  status: "status",
  status_category: "status_category",
  x_postroom_message_id: "x_postroom_message_id",
};

/** An incoming_statuses row as both engines give it once integers are numbers. */
export interface StatusRow {
  id: string;
  account_id: string;
  address_id: string;
  message_id: string | null;
  mail_from: string;
  rcpt_to: string;
  subject: string | null;
  status: string;
  status_category: StatusCategory;
  tls: string | null;
  size: number | null;
  remote_ip: string | null;
  response: string | null;
  x_postroom_message_id: string | null;
  store_url: string | null;
  envelope: string | null;
  created_at: number;
  state: DeliveryState | null;
  attempts: number | null;
  next_attempt_at: number | null;
}

export const STATUS_COLUMNS =
  "id, account_id, address_id, message_id, mail_from, rcpt_to, subject, status, status_category, tls, size, remote_ip, response, x_postroom_message_id, store_url, envelope, created_at, state, attempts, next_attempt_at";

export const statusFromRow = (r: StatusRow): IncomingStatus => ({
  id: r.id,
  accountId: r.account_id,
  addressId: r.address_id,
  messageId: r.message_id,
  mailFrom: r.mail_from,
  rcptTo: r.rcpt_to,
  subject: r.subject,
  status: r.status,
  statusCategory: r.status_category,
  tls: r.tls,
  sizeBytes: r.size,
  remoteIp: r.remote_ip,
  response: r.response,
  postroomMessageId: r.x_postroom_message_id,
  storeUrl: r.store_url,
  envelope: r.envelope,
  createdAtMs: r.created_at,
  state: r.state ?? null,
  attempts: r.attempts ?? null,
  nextAttemptAtMs: r.next_attempt_at ?? null,
});
