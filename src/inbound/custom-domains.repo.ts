// SQL for the custom_domains table. A live domain is unique server-wide (partial unique
// index), so a second claim fails at insert even when two requests race.
import type { SecretBox } from "../lib/secret-key.ts";
import type { Store } from "../store/store.ts";
import { DomainTakenError, type CustomDomain } from "./custom-domain.ts";
import { containsPattern, newestFirst, toPage, type Page, type PageRequest } from "../store/paging.ts";

interface Row {
  id: string;
  account_id: string;
  address_id: string;
  domain: string;
  auth_regex: string | null;
  domain_target: string | null;
  domain_target_password: string | null;
  mx_verified: number;
  mx_checked_at: number | null;
  created_at: number;
}

const COLUMNS = "id, account_id, address_id, domain, auth_regex, domain_target, domain_target_password, mx_verified, mx_checked_at, created_at";

/** The domain target's password is stored encrypted (store.secrets). */
const fromRow = (r: Row, box: SecretBox): CustomDomain => ({
  id: r.id,
  accountId: r.account_id,
  addressId: r.address_id,
  domain: r.domain,
  authRegex: r.auth_regex,
  domainTarget: r.domain_target === null ? null : { url: r.domain_target, password: r.domain_target_password === null ? null : box.open(r.domain_target_password) },
  mxVerified: r.mx_verified === 1,
  mxCheckedAtMs: r.mx_checked_at,
  createdAtMs: r.created_at,
});

export interface CustomDomainRepo {
  /** Throws DomainTakenError when a live record already has the domain. */
  insert(d: CustomDomain): Promise<void>;
  get(accountId: string, addressId: string, id: string): Promise<CustomDomain | null>;
  findLiveByDomain(domain: string): Promise<CustomDomain | null>;
  list(accountId: string, addressId: string, query: string | null, page: PageRequest): Promise<Page<CustomDomain>>;
  softDelete(accountId: string, addressId: string, id: string, nowMs: number): Promise<boolean>;
  recordMxCheck(id: string, verified: boolean, nowMs: number): Promise<void>;
}

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
          d.domainTarget?.password == null ? null : secrets.seal(d.domainTarget.password),
          d.mxVerified ? 1 : 0,
          d.mxCheckedAtMs,
          d.createdAtMs,
        );
      } catch (err) {
        if ((err as { code?: string }).code === "SQLITE_CONSTRAINT_UNIQUE") throw new DomainTakenError(d.domain);
        throw err;
      }
    },
    async get(accountId, addressId, id) {
      const row = db
        .query(`SELECT ${COLUMNS} FROM custom_domains WHERE id = ? AND account_id = ? AND address_id = ? AND deleted_at IS NULL`)
        .get(id, accountId, addressId) as Row | null;
      return row ? fromRow(row, secrets) : null;
    },
    async findLiveByDomain(domain) {
      const row = db.query(`SELECT ${COLUMNS} FROM custom_domains WHERE domain = ? AND deleted_at IS NULL`).get(domain) as Row | null;
      return row ? fromRow(row, secrets) : null;
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
        .query(`SELECT ${COLUMNS} FROM custom_domains WHERE account_id = ? AND address_id = ? AND deleted_at IS NULL${filter}${where}${tail}`)
        .all(...(params as never[])) as Row[];
      return toPage(rows.map((r) => fromRow(r, secrets)), page.limit);
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
