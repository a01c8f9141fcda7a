// SQL for the custom_domains table on SQLite: the CustomDomainRepo port
// (custom-domains.port.ts). Its statements run synchronously; the methods are async only
// to share the port with PostgreSQL (custom-domains.pg.repo.ts).
import type { Store } from "../../store/store.ts";
import { DomainTakenError } from "./custom-domain.ts";
import { customDomainFromRow, sealedDomainTargetPassword, type CustomDomainRepo, type CustomDomainRow } from "./custom-domains.port.ts";
import { containsPattern, newestFirst, toPage } from "../../store/paging.ts";

const COLUMNS =
  "id, account_id, address_id, domain, auth_regex, domain_target, domain_target_password, mx_verified, mx_checked_at, created_at";

export function createCustomDomainRepo(store: Store): CustomDomainRepo {
  const { db, secrets } = store;
  return {
    async insert(d) {
      try {
        db.query(`INSERT INTO custom_domains (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(
          d.id,
          d.accountId,
          d.addressId,
          d.domain,
          d.authRegex,
          d.domainTarget?.url ?? null,
          sealedDomainTargetPassword(d, secrets),
          d.mxVerified ? 1 : 0,
          d.mxCheckedAtMs,
          d.createdAtMs,
        );
      } catch (err) {
        // Only the live-domain index: a taken primary key is SQLITE_CONSTRAINT_PRIMARYKEY.
        if ((err as { code?: string }).code === "SQLITE_CONSTRAINT_UNIQUE") throw new DomainTakenError(d.domain);
        throw err;
      }
    },
    async get(accountId, addressId, id) {
      const row = db
        .query(`SELECT ${COLUMNS} FROM custom_domains WHERE id = ? AND account_id = ? AND address_id = ? AND deleted_at IS NULL`)
        .get(id, accountId, addressId) as CustomDomainRow | null;
      return row ? customDomainFromRow(row, secrets) : null;
    },
    async findLiveByDomain(domain) {
      const row = db
        .query(`SELECT ${COLUMNS} FROM custom_domains WHERE domain = ? AND deleted_at IS NULL`)
        .get(domain) as CustomDomainRow | null;
      return row ? customDomainFromRow(row, secrets) : null;
    },
    async list(accountId, addressId, query, page) {
      const params: unknown[] = [accountId, addressId];
      let filter = "";
      if (query) {
        filter = " AND domain LIKE ? ESCAPE '\\'";
        params.push(containsPattern(query));
      }
      const { where, tail } = newestFirst(page, params);
      const rows = db
        .query(
          `SELECT ${COLUMNS} FROM custom_domains WHERE account_id = ? AND address_id = ? AND deleted_at IS NULL${filter}${where}${tail}`,
        )
        .all(...(params as never[])) as CustomDomainRow[];
      return toPage(
        rows.map((r) => customDomainFromRow(r, secrets)),
        page.limit,
      );
    },
    async softDelete(accountId, addressId, id, nowMs) {
      const res = db
        .query("UPDATE custom_domains SET deleted_at = ? WHERE id = ? AND account_id = ? AND address_id = ? AND deleted_at IS NULL")
        .run(nowMs, id, accountId, addressId);
      return res.changes > 0;
    },
    async recordMxCheck(id, verified, nowMs) {
      db.query("UPDATE custom_domains SET mx_verified = ?, mx_checked_at = ? WHERE id = ?").run(verified ? 1 : 0, nowMs, id);
    },
  };
}
