// SQL for the addresses table: the AddressRepo port (addresses.port.ts), written once for
// both engines against a Db. The search folds ASCII letters only and pages in byte order
// of the ID on both (containsText, db/paging.ts).
// Several nodes may share a PostgreSQL: every write announces the address's ID on
// ADDRESS_CHANGES_CHANNEL in its transaction, and listenForAddressChanges drops it from the
// listening node's routing cache, so a change made on one node routes on all of them (on
// SQLite one process writes, and its writes drop its own cache entries).
import type { SecretBox } from "../../lib/secret-key.ts";
import type { Db } from "../../store/db/db.ts";
import { announce, containsText, toInt } from "../../store/db/dialect.ts";
import { newestFirst } from "../../store/db/paging.ts";
import { empty, type Sql, sql } from "../../store/db/sql.ts";
import type { Listen } from "../../store/engine/engine.ts";
import { containsPattern, toPage } from "../../store/paging.ts";
import type { ChannelSubscription } from "../../store/pg-notify.ts";
import { type AddressRepo, type AddressRow, addressFromRow, editableColumns, type RoutingCache, routingCache } from "./addresses.port.ts";

/** The channel a write announces the changed address's ID on. */
export const ADDRESS_CHANGES_CHANNEL = "postroom_addresses";

/**
 * Drops each announced address from `cache` (the one given to createAddressRepo), and the
 * whole cache when the listening connection came back: notices sent meanwhile are lost.
 */
export function listenForAddressChanges(listen: Listen, cache: RoutingCache): Promise<ChannelSubscription> {
  return listen(
    ADDRESS_CHANGES_CHANNEL,
    (id) => cache.drop(id),
    () => cache.dropAll(),
  );
}

interface Row extends Omit<AddressRow, "store_messages" | "spam_threshold" | "created_at" | "updated_at"> {
  store_messages: unknown;
  spam_threshold: unknown;
  created_at: unknown;
  updated_at: unknown;
}

const SELECT = sql`SELECT id, account_id, target, target_password, target_format, nickname, attachments_json, signing_secret, store_messages,
  on_target_failure, spam_threshold, created_at, updated_at
  FROM addresses`;

export function createAddressRepo(
  db: Db,
  secrets: SecretBox,
  nowMs: () => number = Date.now,
  live: RoutingCache = routingCache(nowMs),
): AddressRepo {
  const fromRow = (r: Row) =>
    addressFromRow(
      {
        ...r,
        store_messages: toInt(r.store_messages, "addresses.store_messages"),
        // A REAL on SQLite, a DOUBLE PRECISION on PostgreSQL: a number on both drivers.
        spam_threshold: r.spam_threshold === null ? null : Number(r.spam_threshold),
        created_at: toInt(r.created_at, "addresses.created_at"),
        updated_at: toInt(r.updated_at, "addresses.updated_at"),
      },
      secrets,
    );
  const one = async (query: Sql) => {
    const row = await db.get<Row>(query);
    return row ? fromRow(row) : null;
  };
  return {
    async insert(a) {
      const c = editableColumns(a, secrets);
      await db.tx(async (tx) => {
        await tx.run(sql`INSERT INTO addresses (id, account_id, target, target_password, target_format, nickname, attachments_json, signing_secret, store_messages,
          on_target_failure, spam_threshold, created_at, updated_at)
          VALUES (${a.id}, ${a.accountId}, ${c.target}, ${c.target_password}, ${c.target_format}, ${c.nickname}, ${c.attachments_json}, ${c.signing_secret}, ${c.store_messages},
          ${c.on_target_failure}, ${c.spam_threshold}, ${a.createdAtMs}, ${a.updatedAtMs})`);
        // The cache keeps no absences today; announced anyway, so a node never serves one.
        await announce(tx, ADDRESS_CHANGES_CHANNEL, a.id);
      });
    },
    get: (accountId, id) => one(sql`${SELECT} WHERE id = ${id} AND account_id = ${accountId} AND deleted_at IS NULL`),
    findLive: (id) => live.find(id, () => one(sql`${SELECT} WHERE id = ${id} AND deleted_at IS NULL`)),
    async list(accountId, query, page) {
      const like = query ? containsPattern(query) : "";
      const filter = query
        ? sql`AND (${containsText(sql`id`, like)} OR ${containsText(sql`COALESCE(nickname, '')`, like)} OR ${containsText(sql`target`, like)})`
        : empty;
      const { where, tail } = newestFirst(page);
      const rows = await db.all<Row>(sql`${SELECT} WHERE account_id = ${accountId} AND deleted_at IS NULL ${filter} ${where} ${tail}`);
      return toPage(rows.map(fromRow), page.limit);
    },
    async update(a) {
      const c = editableColumns(a, secrets);
      live.drop(a.id);
      await db.tx(async (tx) => {
        await tx.run(sql`UPDATE addresses SET target = ${c.target}, target_password = ${c.target_password}, target_format = ${c.target_format},
          nickname = ${c.nickname}, attachments_json = ${c.attachments_json}, signing_secret = ${c.signing_secret},
          store_messages = ${c.store_messages}, on_target_failure = ${c.on_target_failure}, spam_threshold = ${c.spam_threshold}, updated_at = ${a.updatedAtMs}
          WHERE id = ${a.id} AND account_id = ${a.accountId}`);
        await announce(tx, ADDRESS_CHANGES_CHANNEL, a.id);
      });
      // Again once committed: a findLive that read the old row meanwhile does not keep it.
      live.drop(a.id);
    },
    async softDelete(accountId, id, deletedAtMs) {
      live.drop(id);
      const deleted = await db.tx(async (tx) => {
        const res = await tx.run(
          sql`UPDATE addresses SET deleted_at = ${deletedAtMs} WHERE id = ${id} AND account_id = ${accountId} AND deleted_at IS NULL`,
        );
        if (res.changes === 0) return false;
        await tx.run(sql`UPDATE custom_domains SET deleted_at = ${deletedAtMs} WHERE address_id = ${id} AND deleted_at IS NULL`);
        await announce(tx, ADDRESS_CHANGES_CHANNEL, id);
        return true;
      });
      live.drop(id);
      return deleted;
    },
  };
}
