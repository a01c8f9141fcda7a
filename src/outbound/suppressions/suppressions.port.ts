// The port through which the suppression list is read and edited (the API and the check
// before a message is queued), whatever the engine: suppressions.repo.ts implements it once
// for SQLite and PostgreSQL, and one contract test
// (test/outbound/suppressions-repo.contract.test.ts) runs the same cases on both. The
// queue's own suppressions (a bounce's, in the transaction of its event) go through the
// QueueSuppressions port (src/outbound/queue/ports.ts): suppressRecipient on both engines.
import type { Page, PageRequest } from "../../store/paging.ts";
import type { Suppression, SuppressionReason } from "./suppression.ts";

/** Promise-returning on every engine: PostgreSQL answers over a socket, SQLite at once. */
export interface SuppressionRepo {
  /** The addresses among `emails` (compared lowercased) an outbound account must not send to at `nowMs` (expired entries do not count). */
  suppressedAmong(outboundAccountId: string, emails: readonly string[], nowMs: number): Promise<Set<string>>;
  /** Suppresses the address (lowercased); when it already is, returns the entry that is there. */
  add(s: Suppression): Promise<Suppression>;
  /** Newest first; `query` matches part of the address, ASCII letters without case. */
  list(accountId: string, outboundAccountId: string | null, query: string | null, page: PageRequest): Promise<Page<Suppression>>;
  get(accountId: string, id: string): Promise<Suppression | null>;
  remove(accountId: string, id: string): Promise<boolean>;
  /** Deletes up to `limit` entries expired at `nowMs`; returns how many. */
  purgeExpired(nowMs: number, limit: number): Promise<number>;
}

/** A suppressions row as both engines give it once integers are numbers. */
export interface SuppressionRow {
  id: string;
  account_id: string;
  outbound_account_id: string;
  email: string;
  reason: SuppressionReason;
  details_json: string;
  created_at: number;
  expires_at: number | null;
}

export const suppressionFromRow = (r: SuppressionRow): Suppression => ({
  id: r.id,
  accountId: r.account_id,
  outboundAccountId: r.outbound_account_id,
  email: r.email,
  reason: r.reason,
  details: JSON.parse(r.details_json),
  createdAtMs: r.created_at,
  expiresAtMs: r.expires_at,
});
