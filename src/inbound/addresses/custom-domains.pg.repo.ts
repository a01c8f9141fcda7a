// SQL for the custom_domains table on PostgreSQL: the CustomDomainRepo port
// (custom-domains.port.ts), with the SQLite repository's semantics (custom-domains.repo.ts):
// Bun's SQL tagged templates, every value a bound parameter; BIGINT times converted with
// pgInteger; the search folds ASCII letters only and pages in byte order of the ID, as
// SQLite does (pg-paging.ts).
import type { SQL } from "bun";
import type { SecretBox } from "../../lib/secret-key.ts";
import { containsPattern, toPage } from "../../store/paging.ts";
import { pgContains, pgNewestFirst } from "../../store/pg-paging.ts";
import { pgInteger } from "../../store/pg-values.ts";
import { DomainTakenError } from "./custom-domain.ts";
import { customDomainFromRow, sealedDomainTargetPassword, type CustomDomainRepo, type CustomDomainRow } from "./custom-domains.port.ts";

/** The partial unique index that keeps a live domain to one record; a taken ID is another 23505 (custom_domains_pkey). */
const LIVE_DOMAIN_INDEX = "custom_domains_live_domain";
const UNIQUE_VIOLATION = "23505";

interface PgRow extends Omit<CustomDomainRow, "mx_checked_at" | "created_at"> {
  /** BIGINT: a string from Bun's SQL client (a bigint with `bigint: true`). */
  mx_checked_at: string | bigint | null;
  created_at: string | bigint;
}

const fromRow = (r: PgRow, box: SecretBox) =>
  customDomainFromRow(
    {
      ...r,
      mx_verified: pgInteger(r.mx_verified, "custom_domains.mx_verified"),
      mx_checked_at: r.mx_checked_at === null ? null : pgInteger(r.mx_checked_at, "custom_domains.mx_checked_at"),
      created_at: pgInteger(r.created_at, "custom_domains.created_at"),
    },
    box,
  );

export function createPgCustomDomainRepo(sql: SQL, secrets: SecretBox): CustomDomainRepo {
  const select = sql`SELECT id, account_id, address_id, domain, auth_regex, domain_target, domain_target_password, mx_verified, mx_checked_at, created_at FROM custom_domains`;
  const one = async (rows: Promise<PgRow[]>) => {
    const [row] = await rows;
    return row ? fromRow(row, secrets) : null;
  };
  return {
    async insert(d) {
      try {
        await sql`INSERT INTO custom_domains (id, account_id, address_id, domain, auth_regex, domain_target, domain_target_password, mx_verified, mx_checked_at, created_at)
          VALUES (${d.id}, ${d.accountId}, ${d.addressId}, ${d.domain}, ${d.authRegex}, ${d.domainTarget?.url ?? null}, ${sealedDomainTargetPassword(d, secrets)},
            ${d.mxVerified ? 1 : 0}, ${d.mxCheckedAtMs}, ${d.createdAtMs})`;
      } catch (err) {
        const e = err as { errno?: string; constraint?: string };
        if (e.errno === UNIQUE_VIOLATION && e.constraint === LIVE_DOMAIN_INDEX) throw new DomainTakenError(d.domain);
        throw err;
      }
    },
    get: (accountId, addressId, id) =>
      one(sql`${select} WHERE id = ${id} AND account_id = ${accountId} AND address_id = ${addressId} AND deleted_at IS NULL`),
    findLiveByDomain: (domain) => one(sql`${select} WHERE domain = ${domain} AND deleted_at IS NULL`),
    async list(accountId, addressId, query, page) {
      const filter = query ? sql`AND ${pgContains(sql, sql`domain`, containsPattern(query))}` : sql``;
      const { where, tail } = pgNewestFirst(sql, page);
      const rows: PgRow[] =
        await sql`${select} WHERE account_id = ${accountId} AND address_id = ${addressId} AND deleted_at IS NULL ${filter} ${where} ${tail}`;
      return toPage(
        rows.map((r) => fromRow(r, secrets)),
        page.limit,
      );
    },
    async softDelete(accountId, addressId, id, nowMs) {
      const res: { count: number } =
        await sql`UPDATE custom_domains SET deleted_at = ${nowMs} WHERE id = ${id} AND account_id = ${accountId} AND address_id = ${addressId} AND deleted_at IS NULL`;
      return res.count > 0;
    },
    async recordMxCheck(id, verified, nowMs) {
      await sql`UPDATE custom_domains SET mx_verified = ${verified ? 1 : 0}, mx_checked_at = ${nowMs} WHERE id = ${id}`;
    },
  };
}
