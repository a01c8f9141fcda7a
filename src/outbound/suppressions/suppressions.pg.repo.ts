// SQL for the suppression list on PostgreSQL: the SuppressionRepo port
// (suppressions.port.ts), with the same SQL semantics as the SQLite repository
// (suppressions.repo.ts), in Bun SQL tagged templates (every value a bound parameter).
// pgSuppressRecipient is the queue's suppression, written in the queue's own transaction
// (recipientSuppressor on SQLite).
import type { SQL, TransactionSQL } from "bun";
import { newId16 } from "../../lib/ids.ts";
import { containsPattern, toPage } from "../../store/paging.ts";
import { pgContains, pgNewestFirst } from "../../store/pg-paging.ts";
import { pgInteger } from "../../store/pg-values.ts";
import type { Suppression } from "./suppression.ts";
import { suppressionFromRow, type SuppressionRepo, type SuppressionRow } from "./suppressions.port.ts";

interface PgRow extends Omit<SuppressionRow, "created_at"> {
  /** BIGINT: a string from Bun's SQL client (a bigint with `bigint: true`). */
  created_at: string | bigint;
}

const fromRow = (r: PgRow): Suppression => suppressionFromRow({ ...r, created_at: pgInteger(r.created_at, "suppressions.created_at") });

/** Adds the address to the suppression list in the caller's transaction `tx`; a second time changes nothing. */
export async function pgSuppressRecipient(tx: TransactionSQL, s: Omit<Suppression, "id">): Promise<void> {
  await tx`INSERT INTO suppressions (id, account_id, outbound_account_id, email, reason, details_json, created_at)
    VALUES (${newId16()}, ${s.accountId}, ${s.outboundAccountId}, ${s.email}, ${s.reason}, ${JSON.stringify(s.details)}, ${s.createdAtMs})
    ON CONFLICT (outbound_account_id, email) DO NOTHING`;
}

export function createPgSuppressionRepo(sql: SQL): SuppressionRepo {
  const columns = sql`id, account_id, outbound_account_id, email, reason, details_json, created_at`;
  return {
    async suppressedAmong(outboundAccountId, emails) {
      if (emails.length === 0) return new Set();
      const lower = emails.map((e) => e.toLowerCase());
      const rows: { email: string }[] =
        await sql`SELECT email FROM suppressions WHERE outbound_account_id = ${outboundAccountId} AND email IN ${sql(lower)}`;
      return new Set(rows.map((r) => r.email));
    },
    async add(s) {
      const email = s.email.toLowerCase();
      // As on SQLite: an address already suppressed keeps its entry, which is returned; a
      // repeated ID (another conflict) is an error.
      await sql`INSERT INTO suppressions (${columns}) VALUES (${s.id}, ${s.accountId}, ${s.outboundAccountId}, ${email}, ${s.reason}, ${JSON.stringify(s.details)}, ${s.createdAtMs})
        ON CONFLICT (outbound_account_id, email) DO NOTHING`;
      const rows: PgRow[] =
        await sql`SELECT ${columns} FROM suppressions WHERE outbound_account_id = ${s.outboundAccountId} AND email = ${email}`;
      return fromRow(rows[0]!);
    },
    async list(accountId, outboundAccountId, query, page) {
      const byOutbound = outboundAccountId ? sql`AND outbound_account_id = ${outboundAccountId}` : sql``;
      const byText = query ? sql`AND ${pgContains(sql, sql`email`, containsPattern(query))}` : sql``;
      const { where, tail } = pgNewestFirst(sql, page);
      const rows: PgRow[] =
        await sql`SELECT ${columns} FROM suppressions WHERE account_id = ${accountId} ${byOutbound} ${byText} ${where} ${tail}`;
      return toPage(rows.map(fromRow), page.limit);
    },
    async get(accountId, id) {
      const rows: PgRow[] = await sql`SELECT ${columns} FROM suppressions WHERE id = ${id} AND account_id = ${accountId}`;
      return rows[0] ? fromRow(rows[0]) : null;
    },
    async remove(accountId, id) {
      const result: { count: number } = await sql`DELETE FROM suppressions WHERE id = ${id} AND account_id = ${accountId}`;
      return result.count > 0;
    },
  };
}
