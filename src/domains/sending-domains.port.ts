// The port through which sending domains and their verification events are stored,
// whatever the engine: sending-domains.repo.ts implements it once for SQLite and
// PostgreSQL, and one contract test
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
  /** Every account's live domains among `names`: who holds a domain (domain ownership, ownership.ts). */
  findLiveByDomains(names: readonly string[]): Promise<SendingDomain[]>;
  softDelete(accountId: string, id: string, nowMs: number): Promise<boolean>;
  /** Stores a check's outcome and the events it caused, in one commit. */
  recordCheck(id: string, outcome: CheckOutcome, events: { kind: string; details: Record<string, unknown> }[]): Promise<void>;
  /** Live domains whose next check is due, the longest due first (then by ID). */
  due(nowMs: number, limit: number): Promise<SendingDomain[]>;
  /** Calls `listener` with a domain's ID after every write to it (caches of domains and keys drop it). */
  onChange(listener: (domainId: string) => void): void;
}

/**
 * What a node keeps of sending domains in memory (DomainService: lookups and decrypted
 * keys). Every write through the repository forgets the domain on the node that made it; on
 * PostgreSQL the other nodes hear of it by NOTIFY (listenForSendingDomainChanges), and
 * forget everything when notices may have been missed. An entry older than
 * SENDING_DOMAIN_CACHE_MAX_AGE_MS is read again anyway: the bound when a notice is lost, or
 * a row is changed by hand.
 */
export interface SendingDomainCaches {
  forget(domainId: string): void;
  forgetAll(): void;
}

export const SENDING_DOMAIN_CACHE_MAX_AGE_MS = 10_000;

/** A sending_domains row as both engines give it once integers are numbers. */
export interface SendingDomainRow {
  id: string;
  account_id: string;
  domain: string;
  dkim_selector: string;
  dkim_public_key: string;
  dkim_private_key_enc: string;
  ed25519_selector: string;
  ed25519_public_key: string;
  ed25519_private_key_enc: string;
  dkim_verified: number;
  ed25519_verified: number;
  return_path_verified: number;
  spf_verified: number;
  reasons_json: string;
  health_json: string | null;
  verified_at: number | null;
  failing_since: number | null;
  checked_at: number | null;
  next_check_at: number;
  created_at: number;
}

export const sendingDomainFromRow = (r: SendingDomainRow): SendingDomain => ({
  id: r.id,
  accountId: r.account_id,
  domain: r.domain,
  dkimSelector: r.dkim_selector,
  dkimPublicKey: r.dkim_public_key,
  dkimPrivateKeyEnc: r.dkim_private_key_enc,
  ed25519Selector: r.ed25519_selector,
  ed25519PublicKey: r.ed25519_public_key,
  ed25519PrivateKeyEnc: r.ed25519_private_key_enc,
  checks: {
    dkim: r.dkim_verified === 1,
    ed25519: r.ed25519_verified === 1,
    return_path: r.return_path_verified === 1,
    spf: r.spf_verified === 1,
  },
  reasons: JSON.parse(r.reasons_json),
  health: r.health_json === null ? null : JSON.parse(r.health_json),
  verifiedAtMs: r.verified_at,
  failingSinceMs: r.failing_since,
  checkedAtMs: r.checked_at,
  nextCheckAtMs: r.next_check_at,
  createdAtMs: r.created_at,
});

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
