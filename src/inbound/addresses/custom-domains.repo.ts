// SQL for the custom_domains table: the CustomDomainRepo port (custom-domains.port.ts),
// written once for both engines against a Db. The search folds ASCII letters only and
// pages in byte order of the ID on both (containsText, db/paging.ts).
import type { SecretBox } from "../../lib/secret-key.ts";
import type { Db } from "../../store/db/db.ts";
import { containsText, isUniqueViolation, toInt, toIntOrNull } from "../../store/db/dialect.ts";
import { newestFirst } from "../../store/db/paging.ts";
import { empty, sql } from "../../store/db/sql.ts";
import { containsPattern, toPage } from "../../store/paging.ts";
import { DomainTakenError } from "./custom-domain.ts";
import { type CustomDomainRepo, type CustomDomainRow, customDomainFromRow, sealedDomainTargetPassword } from "./custom-domains.port.ts";

/** The partial unique index that keeps a live domain to one record. */
const LIVE_DOMAIN_INDEX = "custom_domains_live_domain";

interface Row extends Omit<CustomDomainRow, "mx_verified" | "mx_checked_at" | "created_at"> {
  mx_verified: unknown;
  mx_checked_at: unknown;
  created_at: unknown;
}

const SELECT = sql`SELECT id, account_id, address_id, domain, auth_regex, domain_target, domain_target_password, mx_verified, mx_checked_at, created_at
  FROM custom_domains`;

export function createCustomDomainRepo(db: Db, secrets: SecretBox): CustomDomainRepo {
  const fromRow = (r: Row) =>
    customDomainFromRow(
      {
        ...r,
        mx_verified: toInt(r.mx_verified, "custom_domains.mx_verified"),
        mx_checked_at: toIntOrNull(r.mx_checked_at, "custom_domains.mx_checked_at"),
        created_at: toInt(r.created_at, "custom_domains.created_at"),
      },
      secrets,
    );
  const one = async (query: ReturnType<typeof sql>) => {
    const row = await db.get<Row>(query);
    return row ? fromRow(row) : null;
  };
  return {
    async insert(d) {
      try {
        await db.run(sql`INSERT INTO custom_domains (id, account_id, address_id, domain, auth_regex, domain_target, domain_target_password, mx_verified, mx_checked_at, created_at)
          VALUES (${d.id}, ${d.accountId}, ${d.addressId}, ${d.domain}, ${d.authRegex}, ${d.domainTarget?.url ?? null}, ${sealedDomainTargetPassword(d, secrets)},
            ${d.mxVerified}, ${d.mxCheckedAtMs}, ${d.createdAtMs})`);
      } catch (err) {
        if (isUniqueViolation(err, LIVE_DOMAIN_INDEX)) throw new DomainTakenError(d.domain);
        throw err;
      }
    },
    get: (accountId, addressId, id) =>
      one(sql`${SELECT} WHERE id = ${id} AND account_id = ${accountId} AND address_id = ${addressId} AND deleted_at IS NULL`),
    findLiveByDomain: (domain) => one(sql`${SELECT} WHERE domain = ${domain} AND deleted_at IS NULL`),
    async list(accountId, addressId, query, page) {
      const filter = query ? sql`AND ${containsText(sql`domain`, containsPattern(query))}` : empty;
      const { where, tail } = newestFirst(page);
      const rows = await db.all<Row>(
        sql`${SELECT} WHERE account_id = ${accountId} AND address_id = ${addressId} AND deleted_at IS NULL ${filter} ${where} ${tail}`,
      );
      return toPage(rows.map(fromRow), page.limit);
    },
    async softDelete(accountId, addressId, id, nowMs) {
      const res = await db.run(sql`UPDATE custom_domains SET deleted_at = ${nowMs}
        WHERE id = ${id} AND account_id = ${accountId} AND address_id = ${addressId} AND deleted_at IS NULL`);
      return res.changes > 0;
    },
    async recordMxCheck(id, verified, nowMs) {
      await db.run(sql`UPDATE custom_domains SET mx_verified = ${verified}, mx_checked_at = ${nowMs} WHERE id = ${id}`);
    },
  };
}
