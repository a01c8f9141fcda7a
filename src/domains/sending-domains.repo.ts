// SQL for sending domains and their verification events on SQLite: the SendingDomainRepo
// port (sending-domains.port.ts). Its statements run synchronously; the methods are async
// only to share the port with PostgreSQL (sending-domains.pg.repo.ts).
import type { Store } from "../store/store.ts";
import { containsPattern, newestFirst, toPage } from "../store/paging.ts";
import { rowidPurge, type Purge, type WindowRow } from "../store/purge-window.ts";
import { newId16 } from "../lib/ids.ts";
import { SendingDomainTakenError } from "./sending-domain.ts";
import {
  changeListeners,
  sendingDomainFromRow as fromRow,
  type SendingDomainRepo,
  type SendingDomainRow as Row,
} from "./sending-domains.port.ts";

const COLUMNS =
  "id, account_id, domain, dkim_selector, dkim_public_key, dkim_private_key_enc, ed25519_selector, ed25519_public_key, ed25519_private_key_enc, dkim_verified, ed25519_verified, return_path_verified, spf_verified, reasons_json, verified_at, failing_since, checked_at, next_check_at, created_at";

export function createSendingDomainRepo(store: Store): SendingDomainRepo {
  const { db } = store;
  const { onChange, changed } = changeListeners();
  return {
    async insert(d) {
      try {
        db.query(
          `INSERT INTO sending_domains (${COLUMNS}) VALUES (${COLUMNS.split(", ")
            .map(() => "?")
            .join(", ")})`,
        ).run(
          d.id,
          d.accountId,
          d.domain,
          d.dkimSelector,
          d.dkimPublicKey,
          d.dkimPrivateKeyEnc,
          d.ed25519Selector,
          d.ed25519PublicKey,
          d.ed25519PrivateKeyEnc,
          d.checks.dkim ? 1 : 0,
          d.checks.ed25519 ? 1 : 0,
          d.checks.return_path ? 1 : 0,
          d.checks.spf ? 1 : 0,
          JSON.stringify(d.reasons),
          d.verifiedAtMs,
          d.failingSinceMs,
          d.checkedAtMs,
          d.nextCheckAtMs,
          d.createdAtMs,
        );
      } catch (err) {
        if ((err as { code?: string }).code === "SQLITE_CONSTRAINT_UNIQUE") throw new SendingDomainTakenError(d.domain);
        throw err;
      }
      changed(d.id);
    },
    async get(accountId, id) {
      const row = db
        .query(`SELECT ${COLUMNS} FROM sending_domains WHERE id = ? AND account_id = ? AND deleted_at IS NULL`)
        .get(id, accountId) as Row | null;
      return row ? fromRow(row) : null;
    },
    async list(accountId, query, page) {
      const params: unknown[] = [accountId];
      let filter = "";
      if (query) {
        filter = " AND domain LIKE ? ESCAPE '\\'";
        params.push(containsPattern(query));
      }
      const { where, tail } = newestFirst(page, params);
      const rows = db
        .query(`SELECT ${COLUMNS} FROM sending_domains WHERE account_id = ? AND deleted_at IS NULL${filter}${where}${tail}`)
        .all(...(params as never[])) as Row[];
      return toPage(rows.map(fromRow), page.limit);
    },
    async findForAccount(accountId, names) {
      if (names.length === 0) return [];
      const rows = db
        .query(
          `SELECT ${COLUMNS} FROM sending_domains WHERE account_id = ? AND deleted_at IS NULL AND domain IN (${names.map(() => "?").join(", ")})`,
        )
        .all(accountId, ...names) as Row[];
      return rows.map(fromRow);
    },
    async findLiveByDomains(names) {
      if (names.length === 0) return [];
      const rows = db
        .query(
          `SELECT ${COLUMNS} FROM sending_domains WHERE deleted_at IS NULL AND domain IN (${names.map(() => "?").join(", ")}) ORDER BY created_at, id`,
        )
        .all(...names) as Row[];
      return rows.map(fromRow);
    },
    async softDelete(accountId, id, nowMs) {
      const deleted =
        db
          .query("UPDATE sending_domains SET deleted_at = ? WHERE id = ? AND account_id = ? AND deleted_at IS NULL")
          .run(nowMs, id, accountId).changes > 0;
      if (deleted) changed(id);
      return deleted;
    },
    async recordCheck(id, o, events) {
      store.tx(() => {
        db.query(
          "UPDATE sending_domains SET dkim_verified = ?, ed25519_verified = ?, return_path_verified = ?, spf_verified = ?, reasons_json = ?, verified_at = ?, failing_since = ?, checked_at = ?, next_check_at = ? WHERE id = ?",
        ).run(
          o.checks.dkim ? 1 : 0,
          o.checks.ed25519 ? 1 : 0,
          o.checks.return_path ? 1 : 0,
          o.checks.spf ? 1 : 0,
          JSON.stringify(o.reasons),
          o.verifiedAtMs,
          o.failingSinceMs,
          o.checkedAtMs,
          o.nextCheckAtMs,
          id,
        );
        const insert = db.query("INSERT INTO sending_domain_events (id, domain_id, kind, details_json, created_at) VALUES (?, ?, ?, ?, ?)");
        for (const e of events) insert.run(newId16(), id, e.kind, JSON.stringify(e.details), o.checkedAtMs);
      });
      changed(id);
    },
    async due(nowMs, limit) {
      const rows = db
        .query(`SELECT ${COLUMNS} FROM sending_domains WHERE deleted_at IS NULL AND next_check_at <= ? ORDER BY next_check_at, id LIMIT ?`)
        .all(nowMs, limit) as Row[];
      return rows.map(fromRow);
    },
    onChange,
  };
}

/**
 * The retention purge: deletes verification events created before the cutoff, a window at
 * a time. Through the log connection: history, whose purge, lost in a power cut, is done
 * again at the next run.
 */
export function createDomainEventPurge(store: Store): Purge {
  const db = store.logDb;
  const window = db.query<WindowRow, [number, number]>(
    "SELECT rowid, created_at AS at, 0 AS keep FROM sending_domain_events WHERE rowid > ? ORDER BY rowid LIMIT ?",
  );
  const remove = db.query("DELETE FROM sending_domain_events WHERE rowid IN (SELECT value FROM json_each(?))");
  return rowidPurge(db, window, (rowids) => remove.run(rowids));
}
