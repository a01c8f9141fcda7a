// SQL for sending domains and their verification events on PostgreSQL: the
// SendingDomainRepo port (sending-domains.port.ts), with the same SQL semantics as the
// SQLite repository (sending-domains.repo.ts), in Bun SQL tagged templates (every value a
// bound parameter). The DKIM private keys are stored as they come, encrypted by
// DomainService, so a row reads the same on either engine and decrypts with the same key.
// Several nodes may share the database: every write announces the domain's ID on
// SENDING_DOMAIN_CHANGES_CHANNEL in its transaction, and listenForSendingDomainChanges
// makes each listening node forget it, so a domain deleted or changed on one node is not
// used by another (within a notice's delivery; SENDING_DOMAIN_CACHE_MAX_AGE_MS if lost).
import type { SQL } from "bun";
import { newId16 } from "../lib/ids.ts";
import { containsPattern, toPage } from "../store/paging.ts";
import { notify, subscribe, type ChannelSubscription } from "../store/pg-notify.ts";
import { pgContains, pgNewestFirst } from "../store/pg-paging.ts";
import { pgInteger } from "../store/pg-values.ts";
import { SendingDomainTakenError, type SendingDomain } from "./sending-domain.ts";
import {
  changeListeners,
  sendingDomainFromRow,
  type SendingDomainCaches,
  type SendingDomainRepo,
  type SendingDomainRow,
} from "./sending-domains.port.ts";
import { pgTablePurge } from "../store/pg-purge-window.ts";
import type { Purge } from "../store/purge-window.ts";

/** The channel a write announces the changed sending domain's ID on. */
export const SENDING_DOMAIN_CHANGES_CHANNEL = "postroom_sending_domains";

/**
 * Makes `caches` (the node's DomainService) forget each announced domain, and every domain
 * when the listening connection came back: notices sent meanwhile are lost. `sql` may be
 * the repository's own client; Bun listens on a dedicated connection of it.
 */
export function listenForSendingDomainChanges(sql: SQL, caches: SendingDomainCaches): Promise<ChannelSubscription> {
  return subscribe(
    sql,
    SENDING_DOMAIN_CHANGES_CHANNEL,
    (id) => caches.forget(id),
    () => caches.forgetAll(),
  );
}

/** BIGINT columns arrive as strings from Bun's SQL client (bigints with `bigint: true`). */
type PgBigint = string | bigint;

interface PgRow extends Omit<SendingDomainRow, "verified_at" | "failing_since" | "checked_at" | "next_check_at" | "created_at"> {
  verified_at: PgBigint | null;
  failing_since: PgBigint | null;
  checked_at: PgBigint | null;
  next_check_at: PgBigint;
  created_at: PgBigint;
}

const orNull = (value: PgBigint | null, column: string): number | null => (value === null ? null : pgInteger(value, column));

const fromRow = (r: PgRow): SendingDomain =>
  sendingDomainFromRow({
    ...r,
    dkim_verified: pgInteger(r.dkim_verified, "sending_domains.dkim_verified"),
    ed25519_verified: pgInteger(r.ed25519_verified, "sending_domains.ed25519_verified"),
    return_path_verified: pgInteger(r.return_path_verified, "sending_domains.return_path_verified"),
    spf_verified: pgInteger(r.spf_verified, "sending_domains.spf_verified"),
    verified_at: orNull(r.verified_at, "sending_domains.verified_at"),
    failing_since: orNull(r.failing_since, "sending_domains.failing_since"),
    checked_at: orNull(r.checked_at, "sending_domains.checked_at"),
    next_check_at: pgInteger(r.next_check_at, "sending_domains.next_check_at"),
    created_at: pgInteger(r.created_at, "sending_domains.created_at"),
  });

/**
 * PostgreSQL's unique_violation of the live-domain index: the domain is taken, as
 * SQLITE_CONSTRAINT_UNIQUE says on SQLite (a repeated ID is SQLITE_CONSTRAINT_PRIMARYKEY
 * there, and stays an error of its own here too).
 */
const isDomainTaken = (err: unknown): boolean => {
  const e = err as { errno?: string; constraint?: string };
  return e.errno === "23505" && e.constraint === "sending_domains_live_domain";
};

export function createPgSendingDomainRepo(sql: SQL): SendingDomainRepo {
  const { onChange, changed } = changeListeners();
  const columns = sql`id, account_id, domain, dkim_selector, dkim_public_key, dkim_private_key_enc, ed25519_selector, ed25519_public_key, ed25519_private_key_enc, dkim_verified, ed25519_verified, return_path_verified, spf_verified, reasons_json, verified_at, failing_since, checked_at, next_check_at, created_at`;
  const flag = (b: boolean) => (b ? 1 : 0);
  // In the write's transaction: the notice goes out on commit only.
  const announce = (tx: SQL, id: string) => notify(tx, SENDING_DOMAIN_CHANGES_CHANNEL, id);
  return {
    async insert(d) {
      try {
        await sql.begin(async (tx) => {
          await tx`INSERT INTO sending_domains (${columns}) VALUES (${d.id}, ${d.accountId}, ${d.domain}, ${d.dkimSelector}, ${d.dkimPublicKey}, ${d.dkimPrivateKeyEnc},
            ${d.ed25519Selector}, ${d.ed25519PublicKey}, ${d.ed25519PrivateKeyEnc}, ${flag(d.checks.dkim)}, ${flag(d.checks.ed25519)}, ${flag(d.checks.return_path)},
            ${flag(d.checks.spf)}, ${JSON.stringify(d.reasons)}, ${d.verifiedAtMs}, ${d.failingSinceMs}, ${d.checkedAtMs}, ${d.nextCheckAtMs}, ${d.createdAtMs})`;
          // A node that looked the from domain up before keeps that it had none: announced so it looks again.
          await announce(tx, d.id);
        });
      } catch (err) {
        if (isDomainTaken(err)) throw new SendingDomainTakenError(d.domain);
        throw err;
      }
      changed(d.id);
    },
    async get(accountId, id) {
      const rows: PgRow[] =
        await sql`SELECT ${columns} FROM sending_domains WHERE id = ${id} AND account_id = ${accountId} AND deleted_at IS NULL`;
      return rows[0] ? fromRow(rows[0]) : null;
    },
    async list(accountId, query, page) {
      const filter = query ? sql`AND ${pgContains(sql, sql`domain`, containsPattern(query))}` : sql``;
      const { where, tail } = pgNewestFirst(sql, page);
      const rows: PgRow[] =
        await sql`SELECT ${columns} FROM sending_domains WHERE account_id = ${accountId} AND deleted_at IS NULL ${filter} ${where} ${tail}`;
      return toPage(rows.map(fromRow), page.limit);
    },
    async findForAccount(accountId, names) {
      if (names.length === 0) return [];
      const rows: PgRow[] =
        await sql`SELECT ${columns} FROM sending_domains WHERE account_id = ${accountId} AND deleted_at IS NULL AND domain IN ${sql(names as string[])}`;
      return rows.map(fromRow);
    },
    async findLiveByDomains(names) {
      if (names.length === 0) return [];
      const rows: PgRow[] =
        await sql`SELECT ${columns} FROM sending_domains WHERE deleted_at IS NULL AND domain IN ${sql(names as string[])} ORDER BY created_at, id COLLATE "C"`;
      return rows.map(fromRow);
    },
    async softDelete(accountId, id, nowMs) {
      const deleted = await sql.begin(async (tx) => {
        const result: { count: number } =
          await tx`UPDATE sending_domains SET deleted_at = ${nowMs} WHERE id = ${id} AND account_id = ${accountId} AND deleted_at IS NULL`;
        if (result.count > 0) await announce(tx, id);
        return result.count > 0;
      });
      if (deleted) changed(id);
      return deleted;
    },
    async recordCheck(id, o, events) {
      await sql.begin(async (tx) => {
        await tx`UPDATE sending_domains SET dkim_verified = ${flag(o.checks.dkim)}, ed25519_verified = ${flag(o.checks.ed25519)}, return_path_verified = ${flag(o.checks.return_path)},
          spf_verified = ${flag(o.checks.spf)}, reasons_json = ${JSON.stringify(o.reasons)}, verified_at = ${o.verifiedAtMs}, failing_since = ${o.failingSinceMs},
          checked_at = ${o.checkedAtMs}, next_check_at = ${o.nextCheckAtMs} WHERE id = ${id}`;
        for (const e of events) {
          await tx`INSERT INTO sending_domain_events (id, domain_id, kind, details_json, created_at) VALUES (${newId16()}, ${id}, ${e.kind}, ${JSON.stringify(e.details)}, ${o.checkedAtMs})`;
        }
        await announce(tx, id);
      });
      changed(id);
    },
    async due(nowMs, limit) {
      const rows: PgRow[] =
        await sql`SELECT ${columns} FROM sending_domains WHERE deleted_at IS NULL AND next_check_at <= ${nowMs} ORDER BY next_check_at, id COLLATE "C" LIMIT ${limit}`;
      return rows.map(fromRow);
    },
    onChange,
  };
}

/** The retention purge (createDomainEventPurge on SQLite): verification events created before the cutoff. */
export const createPgDomainEventPurge = (sql: SQL): Purge => pgTablePurge(sql, "sending_domain_events", "created_at");
