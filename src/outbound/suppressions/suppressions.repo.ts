// SQL for the suppression list on SQLite: recipients an outbound account no longer sends
// to after a hard bounce or a complaint (added in the same commit as that event), or by
// hand. createSuppressionRepo implements the SuppressionRepo port (suppressions.port.ts),
// as suppressions.pg.repo.ts does on PostgreSQL.
import { newId16 } from "../../lib/ids.ts";
import type { Store } from "../../store/store.ts";
import { containsPattern, newestFirst, toPage } from "../../store/paging.ts";
import type { Database } from "bun:sqlite";
import type { Suppression } from "./suppression.ts";
import { suppressionFromRow as fromRow, type SuppressionRepo, type SuppressionRow as Row } from "./suppressions.port.ts";

const COLUMNS = "id, account_id, outbound_account_id, email, reason, details_json, created_at";

/**
 * Suppresses an address, inside the caller's transaction when there is one; a second time
 * changes nothing. On `db`: the connection of that transaction (the outgoing queue's ports,
 * src/outbound/queue/ports.ts, record a bounce's suppression with its event). Synchronous
 * and SQLite only for now: the queue's transactions are SQLite's; PostgreSQL gets its own
 * when the queue moves there.
 */
export function recipientSuppressor(db: Database) {
  const insert = db.query(
    `INSERT INTO suppressions (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (outbound_account_id, email) DO NOTHING`,
  );
  return {
    suppress(s: Omit<Suppression, "id">, id: string = newId16()): void {
      insert.run(id, s.accountId, s.outboundAccountId, s.email, s.reason, JSON.stringify(s.details), s.createdAtMs);
    },
  };
}

export function createSuppressionRepo(store: Store): SuppressionRepo {
  const { db } = store;
  const suppressor = recipientSuppressor(db);
  return {
    async suppressedAmong(outboundAccountId, emails) {
      if (emails.length === 0) return new Set();
      const lower = emails.map((e) => e.toLowerCase());
      const rows = db
        .query(`SELECT email FROM suppressions WHERE outbound_account_id = ? AND email IN (${lower.map(() => "?").join(", ")})`)
        .all(outboundAccountId, ...lower) as { email: string }[];
      return new Set(rows.map((r) => r.email));
    },
    async add(s) {
      const email = s.email.toLowerCase();
      suppressor.suppress({ ...s, email }, s.id);
      return fromRow(
        db.query(`SELECT ${COLUMNS} FROM suppressions WHERE outbound_account_id = ? AND email = ?`).get(s.outboundAccountId, email) as Row,
      );
    },
    async list(accountId, outboundAccountId, query, page) {
      const params: unknown[] = [accountId];
      let filter = "";
      if (outboundAccountId) {
        filter += " AND outbound_account_id = ?";
        params.push(outboundAccountId);
      }
      if (query) {
        filter += " AND email LIKE ? ESCAPE '\\'";
        params.push(containsPattern(query));
      }
      const { where, tail } = newestFirst(page, params);
      const rows = db
        .query(`SELECT ${COLUMNS} FROM suppressions WHERE account_id = ?${filter}${where}${tail}`)
        .all(...(params as never[])) as Row[];
      return toPage(rows.map(fromRow), page.limit);
    },
    async get(accountId, id) {
      const row = db.query(`SELECT ${COLUMNS} FROM suppressions WHERE id = ? AND account_id = ?`).get(id, accountId) as Row | null;
      return row ? fromRow(row) : null;
    },
    async remove(accountId, id) {
      return db.query("DELETE FROM suppressions WHERE id = ? AND account_id = ?").run(id, accountId).changes > 0;
    },
  };
}
