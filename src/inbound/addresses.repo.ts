// SQL for the addresses table. Every read is scoped by account and skips deleted rows,
// except findLive, which inbound routing uses to resolve a recipient on any account.
// The target's password, the S3 secret key and the signing secret are stored encrypted
// (store.secrets) and decrypted as rows are read.
import { BoundedCache } from "../lib/bounded-cache.ts";
import type { SecretBox } from "../lib/secret-key.ts";
import type { Store } from "../store/store.ts";
import { containsPattern, newestFirst, toPage, type Page, type PageRequest } from "../store/paging.ts";
import type { Address, TargetFormat } from "./address.ts";
import type { AttachmentStore } from "./attachment-store.ts";

interface Row {
  id: string;
  account_id: string;
  target: string;
  target_password: string | null;
  target_format: TargetFormat;
  nickname: string | null;
  attachments_json: string;
  signing_secret: string | null;
  store_messages: number;
  created_at: number;
  updated_at: number;
}

const COLUMNS = "id, account_id, target, target_password, target_format, nickname, attachments_json, signing_secret, store_messages, created_at, updated_at";

const fromRow = (r: Row, box: SecretBox): Address => ({
  id: r.id,
  accountId: r.account_id,
  target: { url: r.target, password: r.target_password === null ? null : box.open(r.target_password) },
  targetFormat: r.target_format,
  nickname: r.nickname,
  attachments: attachmentsFrom(r.attachments_json, box),
  signingSecret: r.signing_secret === null ? null : box.open(r.signing_secret),
  storeMessages: r.store_messages === 1,
  createdAtMs: r.created_at,
  updatedAtMs: r.updated_at,
});

function attachmentsFrom(json: string, box: SecretBox): AttachmentStore {
  const a = JSON.parse(json) as AttachmentStore;
  return a.secret_access_key ? { ...a, secret_access_key: box.open(a.secret_access_key) } : a;
}

function attachmentsJson(a: AttachmentStore, box: SecretBox): string {
  return JSON.stringify(a.secret_access_key ? { ...a, secret_access_key: box.seal(a.secret_access_key) } : a);
}

const sealed = (value: string | null, box: SecretBox) => (value === null ? null : box.seal(value));

export interface AddressRepo {
  insert(a: Address): Promise<void>;
  get(accountId: string, id: string): Promise<Address | null>;
  findLive(id: string): Promise<Address | null>;
  list(accountId: string, query: string | null, page: PageRequest): Promise<Page<Address>>;
  update(a: Address): Promise<void>;
  /** Marks the address and its custom domains deleted; false when there was none. */
  softDelete(accountId: string, id: string, nowMs: number): Promise<boolean>;
}

/**
 * Addresses routing keeps in memory (RCPT TO looks one up per recipient). Every change
 * goes through this repository, which drops the entry at once, so a deleted or changed
 * address is never served from here; the age limit only covers edits made to the
 * database by hand while Postroom runs.
 */
export const ROUTING_CACHE_MAX_ENTRIES = 10_000;
export const ROUTING_CACHE_MAX_AGE_MS = 10_000;

export function createAddressRepo(store: Store, nowMs: () => number = Date.now): AddressRepo {
  const { db, secrets } = store;
  const live = new BoundedCache<string, { address: Address; loadedMs: number }>(ROUTING_CACHE_MAX_ENTRIES);
  /** The columns an update may change, from target to store_messages, secrets sealed. */
  const editable = (a: Address) =>
    [a.target.url, sealed(a.target.password, secrets), a.targetFormat, a.nickname, attachmentsJson(a.attachments, secrets), sealed(a.signingSecret, secrets), a.storeMessages ? 1 : 0] as const;
  return {
    async insert(a) {
      db.query(`INSERT INTO addresses (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(a.id, a.accountId, ...editable(a), a.createdAtMs, a.updatedAtMs);
    },
    async get(accountId, id) {
      const row = db.query(`SELECT ${COLUMNS} FROM addresses WHERE id = ? AND account_id = ? AND deleted_at IS NULL`).get(id, accountId) as Row | null;
      return row ? fromRow(row, secrets) : null;
    },
    async findLive(id) {
      const cached = live.get(id);
      if (cached && nowMs() - cached.loadedMs < ROUTING_CACHE_MAX_AGE_MS) return cached.address;
      const row = db.query(`SELECT ${COLUMNS} FROM addresses WHERE id = ? AND deleted_at IS NULL`).get(id) as Row | null;
      if (!row) {
        live.delete(id);
        return null;
      }
      const address = fromRow(row, secrets);
      live.set(id, { address, loadedMs: nowMs() });
      return address;
    },
    async list(accountId, query, page) {
      const params: unknown[] = [accountId];
      let filter = "";
      if (query) {
        const like = containsPattern(query);
        filter = " AND (LOWER(id) LIKE ? ESCAPE '\\' OR LOWER(COALESCE(nickname, '')) LIKE ? ESCAPE '\\' OR LOWER(target) LIKE ? ESCAPE '\\')";
        params.push(like, like, like);
      }
      const { where, tail } = newestFirst(page, params);
      const rows = db.query(`SELECT ${COLUMNS} FROM addresses WHERE account_id = ? AND deleted_at IS NULL${filter}${where}${tail}`).all(...(params as never[])) as Row[];
      return toPage(rows.map((r) => fromRow(r, secrets)), page.limit);
    },
    async update(a) {
      live.delete(a.id);
      db.query("UPDATE addresses SET target = ?, target_password = ?, target_format = ?, nickname = ?, attachments_json = ?, signing_secret = ?, store_messages = ?, updated_at = ? WHERE id = ? AND account_id = ?").run(
        ...editable(a),
        a.updatedAtMs,
        a.id,
        a.accountId,
      );
    },
    async softDelete(accountId, id, deletedAtMs) {
      live.delete(id);
      return store.tx(() => {
        const res = db.query("UPDATE addresses SET deleted_at = ? WHERE id = ? AND account_id = ? AND deleted_at IS NULL").run(deletedAtMs, id, accountId);
        if (res.changes === 0) return false;
        db.query("UPDATE custom_domains SET deleted_at = ? WHERE address_id = ? AND deleted_at IS NULL").run(deletedAtMs, id);
        return true;
      });
    },
  };
}
