// The port through which addresses are kept, whatever the engine: addresses.repo.ts
// implements it once for SQLite and PostgreSQL, and one contract
// test (test/inbound/addresses/addresses-repo.contract.test.ts) runs the same cases on both. Every
// read is scoped by account and skips deleted rows, except findLive, which inbound routing
// uses to resolve a recipient on any account. The target's password, the S3 secret key and
// the signing secret are stored encrypted (a SecretBox) and decrypted as rows are read.
import { BoundedCache } from "../../lib/bounded-cache.ts";
import type { SecretBox } from "../../lib/secret-key.ts";
import type { Page, PageRequest } from "../../store/paging.ts";
import type { Address, TargetFailureMode, TargetFormat } from "./address.ts";
import type { AttachmentStore } from "./attachment-store.ts";

/** Promise-returning on every engine: PostgreSQL answers over a socket, SQLite at once. */
export interface AddressRepo {
  insert(a: Address): Promise<void>;
  get(accountId: string, id: string): Promise<Address | null>;
  findLive(id: string): Promise<Address | null>;
  /** Newest first; `query` matches a part of the ID, nickname or target, ASCII letters without case. */
  list(accountId: string, query: string | null, page: PageRequest): Promise<Page<Address>>;
  update(a: Address): Promise<void>;
  /** Marks the address and its custom domains deleted; false when there was none. */
  softDelete(accountId: string, id: string, nowMs: number): Promise<boolean>;
}

/**
 * Addresses routing keeps in memory (RCPT TO looks one up per recipient). Every change
 * goes through this repository, which drops the entry at once, so a deleted or changed
 * address is never served from here by the node that changed it. On PostgreSQL the other
 * nodes hear of the change by NOTIFY (listenForAddressChanges); the age limit covers changes
 * made by hand, and notices lost while a node's listening connection was down.
 */
export const ROUTING_CACHE_MAX_ENTRIES = 10_000;
export const ROUTING_CACHE_MAX_AGE_MS = 10_000;

export interface RoutingCache {
  /** The cached address when young enough, else what `load` reads (kept unless a drop happened meanwhile). */
  find(id: string, load: () => Promise<Address | null>): Promise<Address | null>;
  drop(id: string): void;
  /** Drops every entry: after notices of changes may have been missed (addresses.repo.ts). */
  dropAll(): void;
}

export function routingCache(nowMs: () => number): RoutingCache {
  const live = new BoundedCache<string, { address: Address; loadedMs: number }>(ROUTING_CACHE_MAX_ENTRIES);
  // A load that was under way while a change dropped an entry may have read the row as it
  // was before the change (PostgreSQL answers later, on another connection): it is served
  // to its caller but not kept.
  let drops = 0;
  return {
    async find(id, load) {
      const cached = live.get(id);
      if (cached && nowMs() - cached.loadedMs < ROUTING_CACHE_MAX_AGE_MS) return cached.address;
      const dropsBefore = drops;
      const address = await load();
      if (!address) live.delete(id);
      else if (drops === dropsBefore) live.set(id, { address, loadedMs: nowMs() });
      return address;
    },
    drop(id) {
      drops++;
      live.delete(id);
    },
    dropAll() {
      drops++;
      live.clear();
    },
  };
}

/** An addresses row as both engines give it once integers are numbers. */
export interface AddressRow {
  id: string;
  account_id: string;
  target: string;
  target_password: string | null;
  target_format: TargetFormat;
  nickname: string | null;
  attachments_json: string;
  signing_secret: string | null;
  store_messages: number;
  on_target_failure: TargetFailureMode;
  spam_threshold: number | null;
  created_at: number;
  updated_at: number;
}

export const addressFromRow = (r: AddressRow, box: SecretBox): Address => ({
  id: r.id,
  accountId: r.account_id,
  target: { url: r.target, password: r.target_password === null ? null : box.open(r.target_password) },
  targetFormat: r.target_format,
  nickname: r.nickname,
  attachments: attachmentsFrom(r.attachments_json, box),
  signingSecret: r.signing_secret === null ? null : box.open(r.signing_secret),
  storeMessages: r.store_messages === 1,
  onTargetFailure: r.on_target_failure === "queue" ? "queue" : "defer",
  spamThreshold: r.spam_threshold,
  createdAtMs: r.created_at,
  updatedAtMs: r.updated_at,
});

/** The columns an update may change, from target to store_messages, secrets sealed. */
export const editableColumns = (a: Address, box: SecretBox) =>
  ({
    target: a.target.url,
    target_password: sealed(a.target.password, box),
    target_format: a.targetFormat,
    nickname: a.nickname,
    attachments_json: attachmentsJson(a.attachments, box),
    signing_secret: sealed(a.signingSecret, box),
    store_messages: a.storeMessages ? 1 : 0,
    on_target_failure: a.onTargetFailure ?? "defer",
    spam_threshold: a.spamThreshold ?? null,
  }) as const;

function attachmentsFrom(json: string, box: SecretBox): AttachmentStore {
  const a = JSON.parse(json) as AttachmentStore;
  return a.secret_access_key ? { ...a, secret_access_key: box.open(a.secret_access_key) } : a;
}

function attachmentsJson(a: AttachmentStore, box: SecretBox): string {
  return JSON.stringify(a.secret_access_key ? { ...a, secret_access_key: box.seal(a.secret_access_key) } : a);
}

const sealed = (value: string | null, box: SecretBox) => (value === null ? null : box.seal(value));
