// The port through which sending domains and their verification events are stored,
// whatever the engine: SQLite (sending-domains.repo.ts) and PostgreSQL
// (sending-domains.pg.repo.ts) implement it, and one contract test
// (test/domains/sending-domains-repo.contract.test.ts) runs the same cases on both. Reads
// are scoped by account and skip deleted rows, except the ones the verifier job and the
// signer use. DKIM private keys arrive already encrypted (DomainService, keys.ts) and are
// stored as they come: neither repository sees a key in clear.
import type { Page, PageRequest } from "../store/paging.ts";
import type { CheckOutcome, SendingDomain } from "./sending-domain.ts";

/** Promise-returning on every engine: PostgreSQL answers over a socket, SQLite at once. */
export interface SendingDomainRepo {
  /** Throws SendingDomainTakenError when the account already has this domain (live). */
  insert(d: SendingDomain): Promise<void>;
  get(accountId: string, id: string): Promise<SendingDomain | null>;
  /** Newest first; `query` matches part of the domain, ASCII letters without case. */
  list(accountId: string, query: string | null, page: PageRequest): Promise<Page<SendingDomain>>;
  /** The account's live domains among `names` (a from domain and its parents). */
  findForAccount(accountId: string, names: readonly string[]): Promise<SendingDomain[]>;
  softDelete(accountId: string, id: string, nowMs: number): Promise<boolean>;
  /** Stores a check's outcome and the events it caused, in one commit. */
  recordCheck(id: string, outcome: CheckOutcome, events: { kind: string; details: Record<string, unknown> }[]): Promise<void>;
  /** Live domains whose next check is due, the longest due first (then by ID). */
  due(nowMs: number, limit: number): Promise<SendingDomain[]>;
  /** Calls `listener` with a domain's ID after every write to it (caches of domains and keys drop it). */
  onChange(listener: (domainId: string) => void): void;
}

/** The onChange half of a repository: its listeners, and the call after a write. */
export function changeListeners(): { onChange(listener: (domainId: string) => void): void; changed(domainId: string): void } {
  const listeners: ((domainId: string) => void)[] = [];
  return {
    onChange: (listener) => void listeners.push(listener),
    changed(domainId) {
      for (const l of listeners) l(domainId);
    },
  };
}
