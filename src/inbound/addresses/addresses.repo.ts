// SQL for the addresses table on SQLite: the AddressRepo port (addresses.port.ts). Its
// statements run synchronously; the methods are async only to share the port with
// PostgreSQL (addresses.pg.repo.ts).
import type { Store } from "../../store/store.ts";
import { containsPattern, newestFirst, toPage } from "../../store/paging.ts";
import type { Address } from "./address.ts";
import { addressFromRow, editableColumns, routingCache, type AddressRepo, type AddressRow } from "./addresses.port.ts";

const COLUMNS =
  "id, account_id, target, target_password, target_format, nickname, attachments_json, signing_secret, store_messages, created_at, updated_at";

export function createAddressRepo(store: Store, nowMs: () => number = Date.now): AddressRepo {
  const { db, secrets } = store;
  const live = routingCache(nowMs);
  /** The editable columns in the order of COLUMNS (target to store_messages). */
  const editable = (a: Address) => {
    const c = editableColumns(a, secrets);
    return [c.target, c.target_password, c.target_format, c.nickname, c.attachments_json, c.signing_secret, c.store_messages] as const;
  };
  return {
    async insert(a) {
      db.query(`INSERT INTO addresses (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(
        a.id,
        a.accountId,
        ...editable(a),
        a.createdAtMs,
        a.updatedAtMs,
      );
    },
    async get(accountId, id) {
      const row = db
        .query(`SELECT ${COLUMNS} FROM addresses WHERE id = ? AND account_id = ? AND deleted_at IS NULL`)
        .get(id, accountId) as AddressRow | null;
      return row ? addressFromRow(row, secrets) : null;
    },
    findLive: (id) =>
      live.find(id, async () => {
        const row = db.query(`SELECT ${COLUMNS} FROM addresses WHERE id = ? AND deleted_at IS NULL`).get(id) as AddressRow | null;
        return row ? addressFromRow(row, secrets) : null;
      }),
    async list(accountId, query, page) {
      const params: unknown[] = [accountId];
      let filter = "";
      if (query) {
        const like = containsPattern(query);
        filter =
          " AND (LOWER(id) LIKE ? ESCAPE '\\' OR LOWER(COALESCE(nickname, '')) LIKE ? ESCAPE '\\' OR LOWER(target) LIKE ? ESCAPE '\\')";
        params.push(like, like, like);
      }
      const { where, tail } = newestFirst(page, params);
      const rows = db
        .query(`SELECT ${COLUMNS} FROM addresses WHERE account_id = ? AND deleted_at IS NULL${filter}${where}${tail}`)
        .all(...(params as never[])) as AddressRow[];
      return toPage(
        rows.map((r) => addressFromRow(r, secrets)),
        page.limit,
      );
    },
    async update(a) {
      live.drop(a.id);
      db.query(
        "UPDATE addresses SET target = ?, target_password = ?, target_format = ?, nickname = ?, attachments_json = ?, signing_secret = ?, store_messages = ?, updated_at = ? WHERE id = ? AND account_id = ?",
      ).run(...editable(a), a.updatedAtMs, a.id, a.accountId);
    },
    async softDelete(accountId, id, deletedAtMs) {
      live.drop(id);
      return store.tx(() => {
        const res = db
          .query("UPDATE addresses SET deleted_at = ? WHERE id = ? AND account_id = ? AND deleted_at IS NULL")
          .run(deletedAtMs, id, accountId);
        if (res.changes === 0) return false;
        db.query("UPDATE custom_domains SET deleted_at = ? WHERE address_id = ? AND deleted_at IS NULL").run(deletedAtMs, id);
        return true;
      });
    },
  };
}
