// SQL for the suppression list: recipients an outbound account no longer sends to after a
// hard bounce or a complaint (added in the same commit as that event, suppressRecipient),
// or by hand. createSuppressionRepo implements the SuppressionRepo port
// (suppressions.port.ts), written once for both engines against a Db.
import { Coalescer } from "../../lib/coalescer.ts";
import { newId16 } from "../../lib/ids.ts";
import type { Db } from "../../store/db/db.ts";
import { containsText, toInt } from "../../store/db/dialect.ts";
import { newestFirst } from "../../store/db/paging.ts";
import { run, type Script } from "../../store/db/script.ts";
import { empty, inList, sql } from "../../store/db/sql.ts";
import { containsPattern, toPage } from "../../store/paging.ts";
import type { Suppression } from "./suppression.ts";
import { type SuppressionRepo, type SuppressionRow, suppressionFromRow } from "./suppressions.port.ts";

interface Row extends Omit<SuppressionRow, "created_at" | "expires_at"> {
  created_at: unknown;
  expires_at: unknown;
}

const fromRow = (r: Row): Suppression =>
  suppressionFromRow({
    ...r,
    created_at: toInt(r.created_at, "suppressions.created_at"),
    expires_at: r.expires_at === null ? null : toInt(r.expires_at, "suppressions.expires_at"),
  });

const COLUMNS = sql`id, account_id, outbound_account_id, email, reason, details_json, created_at, expires_at`;

// An address already suppressed keeps its entry, unless that entry has expired by now or
// the new one never expires (a complaint or a manual entry after a hard bounce): then the
// new one takes its place, under the same ID.
const insert = (s: Omit<Suppression, "id">, id: string) =>
  sql`INSERT INTO suppressions (${COLUMNS}) VALUES (${id}, ${s.accountId}, ${s.outboundAccountId}, ${s.email}, ${s.reason}, ${JSON.stringify(s.details)}, ${s.createdAtMs}, ${s.expiresAtMs})
    ON CONFLICT (outbound_account_id, email) DO UPDATE SET reason = excluded.reason, details_json = excluded.details_json,
      created_at = excluded.created_at, expires_at = excluded.expires_at
    WHERE suppressions.expires_at IS NOT NULL AND (suppressions.expires_at <= excluded.created_at OR excluded.expires_at IS NULL)`;

/**
 * Suppresses an address in the caller's transaction (the outgoing queue records a bounce's
 * suppression with its event, src/outbound/queue/ports.ts); a second time changes nothing.
 */
export function* suppressRecipient(s: Omit<Suppression, "id">): Script<void> {
  yield* run(insert(s, newId16()));
}

/** One send's check: its outbound account and recipients (lowercased), at its time. */
interface Lookup {
  outboundAccountId: string;
  lower: string[];
  nowMs: number;
}

/** Addresses per statement at most (a bound on its parameters); a larger check takes several. */
const EMAILS_PER_STATEMENT = 500;

/**
 * The checks of sends that arrive together, in one SELECT per EMAILS_PER_STATEMENT addresses
 * (Coalescer; issue 38: a SELECT per send was a round trip per message on PostgreSQL).
 * The rows of every account and address asked are read; each check keeps its own pairs,
 * in force at its own time.
 */
function suppressionLookups(db: Db): Coalescer<Lookup, Set<string>> {
  return new Coalescer(async (lookups) => {
    const accounts = [...new Set(lookups.map((l) => l.outboundAccountId))];
    const emails = [...new Set(lookups.flatMap((l) => l.lower))];
    const rows: { outbound_account_id: string; email: string; expires_at: unknown }[] = [];
    for (let i = 0; i < emails.length; i += EMAILS_PER_STATEMENT) {
      const part = emails.slice(i, i + EMAILS_PER_STATEMENT);
      rows.push(
        ...(await db.all<(typeof rows)[number]>(
          sql`SELECT outbound_account_id, email, expires_at FROM suppressions WHERE ${inList("outbound_account_id", accounts)} AND ${inList("email", part)}`,
        )),
      );
    }
    return lookups.map((l) => {
      const asked = new Set(l.lower);
      const inForceNow = (r: (typeof rows)[number]) => r.expires_at === null || toInt(r.expires_at, "suppressions.expires_at") > l.nowMs;
      return new Set(
        rows.filter((r) => r.outbound_account_id === l.outboundAccountId && asked.has(r.email) && inForceNow(r)).map((r) => r.email),
      );
    });
  });
}

export function createSuppressionRepo(db: Db): SuppressionRepo {
  const lookups = suppressionLookups(db);
  return {
    async suppressedAmong(outboundAccountId, emails, nowMs) {
      if (emails.length === 0) return new Set();
      return lookups.submit({ outboundAccountId, lower: emails.map((e) => e.toLowerCase()), nowMs });
    },
    async add(s) {
      const email = s.email.toLowerCase();
      // An address already suppressed keeps its entry (see insert), which is returned; a
      // repeated ID (another conflict) is an error.
      await db.run(insert({ ...s, email }, s.id));
      const row = await db.get<Row>(
        sql`SELECT ${COLUMNS} FROM suppressions WHERE outbound_account_id = ${s.outboundAccountId} AND email = ${email}`,
      );
      return fromRow(row!);
    },
    async list(accountId, outboundAccountId, query, page) {
      const byOutbound = outboundAccountId ? sql`AND outbound_account_id = ${outboundAccountId}` : empty;
      const byText = query ? sql`AND ${containsText(sql`email`, containsPattern(query))}` : empty;
      const { where, tail } = newestFirst(page);
      const rows = await db.all<Row>(
        sql`SELECT ${COLUMNS} FROM suppressions WHERE account_id = ${accountId} ${byOutbound} ${byText} ${where} ${tail}`,
      );
      return toPage(rows.map(fromRow), page.limit);
    },
    async get(accountId, id) {
      const row = await db.get<Row>(sql`SELECT ${COLUMNS} FROM suppressions WHERE id = ${id} AND account_id = ${accountId}`);
      return row ? fromRow(row) : null;
    },
    remove: async (accountId, id) =>
      (await db.run(sql`DELETE FROM suppressions WHERE id = ${id} AND account_id = ${accountId}`)).changes > 0,
    purgeExpired: async (nowMs, limit) =>
      (
        await db.run(
          sql`DELETE FROM suppressions WHERE id IN (SELECT id FROM suppressions WHERE expires_at IS NOT NULL AND expires_at <= ${nowMs} LIMIT ${limit})`,
        )
      ).changes,
  };
}
