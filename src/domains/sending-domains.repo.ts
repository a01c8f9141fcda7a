// SQL for sending domains and their verification events: the SendingDomainRepo port
// (sending-domains.port.ts), written once for both engines against a Db. The DKIM private
// keys are stored as they come, encrypted by DomainService, so a row reads the same on
// either engine and decrypts with the same key. Several nodes may share a PostgreSQL: every
// write announces the domain's ID on SENDING_DOMAIN_CHANGES_CHANNEL in its transaction, and
// listenForSendingDomainChanges makes each listening node forget it, so a domain deleted or
// changed on one node is not used by another (within a notice's delivery;
// SENDING_DOMAIN_CACHE_MAX_AGE_MS if lost). The verification events' retention purge is
// src/jobs/purges*.repo.ts's.
import { newId16 } from "../lib/ids.ts";
import type { Db } from "../store/db/db.ts";
import { announce, collateC, containsText, isUniqueViolation, toInt, toIntOrNull } from "../store/db/dialect.ts";
import { newestFirst } from "../store/db/paging.ts";
import { empty, inList, type Sql, sql } from "../store/db/sql.ts";
import type { Listen } from "../store/engine/engine.ts";
import { containsPattern, toPage } from "../store/paging.ts";
import type { ChannelSubscription } from "../store/pg-notify.ts";
import { type SendingDomain, SendingDomainTakenError } from "./sending-domain.ts";
import {
  changeListeners,
  type SendingDomainCaches,
  type SendingDomainRepo,
  type SendingDomainRow,
  sendingDomainFromRow,
} from "./sending-domains.port.ts";

/** The channel a write announces the changed sending domain's ID on. */
export const SENDING_DOMAIN_CHANGES_CHANNEL = "postroom_sending_domains";

/** The partial unique index that keeps a live domain to one record (a repeated ID is another error). */
const LIVE_DOMAIN_INDEX = "sending_domains_live_domain";

/**
 * Makes `caches` (the node's DomainService) forget each announced domain, and every domain
 * when the listening connection came back: notices sent meanwhile are lost.
 */
export function listenForSendingDomainChanges(listen: Listen, caches: SendingDomainCaches): Promise<ChannelSubscription> {
  return listen(
    SENDING_DOMAIN_CHANGES_CHANNEL,
    (id) => caches.forget(id),
    () => caches.forgetAll(),
  );
}

type Integers = "dkim_verified" | "ed25519_verified" | "return_path_verified" | "spf_verified";
type Times = "verified_at" | "failing_since" | "checked_at" | "next_check_at" | "created_at";
type Row = Omit<SendingDomainRow, Integers | Times> & Record<Integers | Times, unknown>;

const fromRow = (r: Row): SendingDomain =>
  sendingDomainFromRow({
    ...r,
    dkim_verified: toInt(r.dkim_verified, "sending_domains.dkim_verified"),
    ed25519_verified: toInt(r.ed25519_verified, "sending_domains.ed25519_verified"),
    return_path_verified: toInt(r.return_path_verified, "sending_domains.return_path_verified"),
    spf_verified: toInt(r.spf_verified, "sending_domains.spf_verified"),
    verified_at: toIntOrNull(r.verified_at, "sending_domains.verified_at"),
    failing_since: toIntOrNull(r.failing_since, "sending_domains.failing_since"),
    checked_at: toIntOrNull(r.checked_at, "sending_domains.checked_at"),
    next_check_at: toInt(r.next_check_at, "sending_domains.next_check_at"),
    created_at: toInt(r.created_at, "sending_domains.created_at"),
  });

const COLUMNS = sql`id, account_id, domain, dkim_selector, dkim_public_key, dkim_private_key_enc, ed25519_selector, ed25519_public_key,
  ed25519_private_key_enc, dkim_verified, ed25519_verified, return_path_verified, spf_verified, reasons_json, verified_at,
  failing_since, checked_at, next_check_at, created_at, health_json`;

export function createSendingDomainRepo(db: Db): SendingDomainRepo {
  const { onChange, changed } = changeListeners();
  const many = async (query: Sql) => (await db.all<Row>(query)).map(fromRow);
  return {
    async insert(d) {
      try {
        await db.tx(async (tx) => {
          await tx.run(sql`INSERT INTO sending_domains (${COLUMNS}) VALUES (${d.id}, ${d.accountId}, ${d.domain}, ${d.dkimSelector},
            ${d.dkimPublicKey}, ${d.dkimPrivateKeyEnc}, ${d.ed25519Selector}, ${d.ed25519PublicKey}, ${d.ed25519PrivateKeyEnc},
            ${d.checks.dkim}, ${d.checks.ed25519}, ${d.checks.return_path}, ${d.checks.spf}, ${JSON.stringify(d.reasons)},
            ${d.verifiedAtMs}, ${d.failingSinceMs}, ${d.checkedAtMs}, ${d.nextCheckAtMs}, ${d.createdAtMs},
            ${d.health === null ? null : JSON.stringify(d.health)})`);
          // A node that looked the from domain up before keeps that it had none: announced so it looks again.
          await announce(tx, SENDING_DOMAIN_CHANGES_CHANNEL, d.id);
        });
      } catch (err) {
        if (isUniqueViolation(err, LIVE_DOMAIN_INDEX)) throw new SendingDomainTakenError(d.domain);
        throw err;
      }
      changed(d.id);
    },
    async get(accountId, id) {
      const row = await db.get<Row>(
        sql`SELECT ${COLUMNS} FROM sending_domains WHERE id = ${id} AND account_id = ${accountId} AND deleted_at IS NULL`,
      );
      return row ? fromRow(row) : null;
    },
    async list(accountId, query, page) {
      const filter = query ? sql`AND ${containsText(sql`domain`, containsPattern(query))}` : empty;
      const { where, tail } = newestFirst(page);
      const rows = await many(
        sql`SELECT ${COLUMNS} FROM sending_domains WHERE account_id = ${accountId} AND deleted_at IS NULL ${filter} ${where} ${tail}`,
      );
      return toPage(rows, page.limit);
    },
    findForAccount: async (accountId, names) =>
      names.length === 0
        ? []
        : many(
            sql`SELECT ${COLUMNS} FROM sending_domains WHERE account_id = ${accountId} AND deleted_at IS NULL AND ${inList("domain", names)}`,
          ),
    findLiveByDomains: async (names) =>
      names.length === 0
        ? []
        : many(
            sql`SELECT ${COLUMNS} FROM sending_domains WHERE deleted_at IS NULL AND ${inList("domain", names)} ORDER BY created_at, id${collateC}`,
          ),
    async softDelete(accountId, id, nowMs) {
      const deleted = await db.tx(async (tx) => {
        const result = await tx.run(
          sql`UPDATE sending_domains SET deleted_at = ${nowMs} WHERE id = ${id} AND account_id = ${accountId} AND deleted_at IS NULL`,
        );
        if (result.changes > 0) await announce(tx, SENDING_DOMAIN_CHANGES_CHANNEL, id);
        return result.changes > 0;
      });
      if (deleted) changed(id);
      return deleted;
    },
    async recordCheck(id, o, events) {
      await db.tx(async (tx) => {
        await tx.run(sql`UPDATE sending_domains SET dkim_verified = ${o.checks.dkim}, ed25519_verified = ${o.checks.ed25519},
          return_path_verified = ${o.checks.return_path}, spf_verified = ${o.checks.spf}, reasons_json = ${JSON.stringify(o.reasons)}, health_json = ${o.health === null ? null : JSON.stringify(o.health)},
          verified_at = ${o.verifiedAtMs}, failing_since = ${o.failingSinceMs}, checked_at = ${o.checkedAtMs}, next_check_at = ${o.nextCheckAtMs}
          WHERE id = ${id}`);
        for (const e of events) {
          await tx.run(sql`INSERT INTO sending_domain_events (id, domain_id, kind, details_json, created_at)
            VALUES (${newId16()}, ${id}, ${e.kind}, ${JSON.stringify(e.details)}, ${o.checkedAtMs})`);
        }
        await announce(tx, SENDING_DOMAIN_CHANGES_CHANNEL, id);
      });
      changed(id);
    },
    due: (nowMs, limit) =>
      many(sql`SELECT ${COLUMNS} FROM sending_domains WHERE deleted_at IS NULL AND next_check_at <= ${nowMs}
        ORDER BY next_check_at, id${collateC} LIMIT ${limit}`),
    onChange,
  };
}
