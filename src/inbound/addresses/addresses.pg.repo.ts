// SQL for the addresses table on PostgreSQL: the AddressRepo port (addresses.port.ts), with
// the SQLite repository's semantics (addresses.repo.ts): Bun's SQL tagged templates, every
// value a bound parameter; BIGINT times converted with pgInteger; the search folds ASCII
// letters only and pages in byte order of the ID, as SQLite does (pg-paging.ts).
// Several nodes may share the database: every write announces the address's ID on
// ADDRESS_CHANGES_CHANNEL in its transaction, and listenForAddressChanges drops it from the
// listening node's routing cache, so a change made on one node routes on all of them.
import type { SQL } from "bun";
import type { SecretBox } from "../../lib/secret-key.ts";
import { containsPattern, toPage } from "../../store/paging.ts";
import { pgContains, pgNewestFirst } from "../../store/pg-paging.ts";
import { notify, subscribe, type ChannelSubscription } from "../../store/pg-notify.ts";
import { pgInteger } from "../../store/pg-values.ts";
import { addressFromRow, editableColumns, routingCache, type AddressRepo, type AddressRow, type RoutingCache } from "./addresses.port.ts";

/** The channel a write announces the changed address's ID on. */
export const ADDRESS_CHANGES_CHANNEL = "postroom_addresses";

/**
 * Drops each announced address from `cache` (the one given to createPgAddressRepo), and the
 * whole cache when the listening connection came back: notices sent meanwhile are lost.
 * `sql` may be the repository's own client; Bun listens on a dedicated connection of it.
 */
export function listenForAddressChanges(sql: SQL, cache: RoutingCache): Promise<ChannelSubscription> {
  return subscribe(
    sql,
    ADDRESS_CHANGES_CHANNEL,
    (id) => cache.drop(id),
    () => cache.dropAll(),
  );
}

interface PgRow extends Omit<AddressRow, "created_at" | "updated_at"> {
  /** BIGINT: a string from Bun's SQL client (a bigint with `bigint: true`). */
  created_at: string | bigint;
  updated_at: string | bigint;
}

const fromRow = (r: PgRow, box: SecretBox) =>
  addressFromRow(
    {
      ...r,
      store_messages: pgInteger(r.store_messages, "addresses.store_messages"),
      created_at: pgInteger(r.created_at, "addresses.created_at"),
      updated_at: pgInteger(r.updated_at, "addresses.updated_at"),
    },
    box,
  );

export function createPgAddressRepo(
  sql: SQL,
  secrets: SecretBox,
  nowMs: () => number = Date.now,
  live: RoutingCache = routingCache(nowMs),
): AddressRepo {
  const announce = (tx: SQL, id: string) => notify(tx, ADDRESS_CHANGES_CHANNEL, id);
  const select = sql`SELECT id, account_id, target, target_password, target_format, nickname, attachments_json, signing_secret, store_messages, created_at, updated_at FROM addresses`;
  const one = async (rows: Promise<PgRow[]>) => {
    const [row] = await rows;
    return row ? fromRow(row, secrets) : null;
  };
  return {
    async insert(a) {
      const c = editableColumns(a, secrets);
      await sql.begin(async (tx) => {
        await tx`INSERT INTO addresses (id, account_id, target, target_password, target_format, nickname, attachments_json, signing_secret, store_messages, created_at, updated_at)
          VALUES (${a.id}, ${a.accountId}, ${c.target}, ${c.target_password}, ${c.target_format}, ${c.nickname}, ${c.attachments_json}, ${c.signing_secret}, ${c.store_messages}, ${a.createdAtMs}, ${a.updatedAtMs})`;
        // The cache keeps no absences today; announced anyway, so a node never serves one.
        await announce(tx, a.id);
      });
    },
    get: (accountId, id) => one(sql`${select} WHERE id = ${id} AND account_id = ${accountId} AND deleted_at IS NULL`),
    findLive: (id) => live.find(id, () => one(sql`${select} WHERE id = ${id} AND deleted_at IS NULL`)),
    async list(accountId, query, page) {
      const like = query ? containsPattern(query) : "";
      const filter = query
        ? sql`AND (${pgContains(sql, sql`id`, like)} OR ${pgContains(sql, sql`COALESCE(nickname, '')`, like)} OR ${pgContains(sql, sql`target`, like)})`
        : sql``;
      const { where, tail } = pgNewestFirst(sql, page);
      const rows: PgRow[] = await sql`${select} WHERE account_id = ${accountId} AND deleted_at IS NULL ${filter} ${where} ${tail}`;
      return toPage(
        rows.map((r) => fromRow(r, secrets)),
        page.limit,
      );
    },
    async update(a) {
      const c = editableColumns(a, secrets);
      live.drop(a.id);
      await sql.begin(async (tx) => {
        await tx`UPDATE addresses SET target = ${c.target}, target_password = ${c.target_password}, target_format = ${c.target_format}, nickname = ${c.nickname},
          attachments_json = ${c.attachments_json}, signing_secret = ${c.signing_secret}, store_messages = ${c.store_messages}, updated_at = ${a.updatedAtMs}
          WHERE id = ${a.id} AND account_id = ${a.accountId}`;
        await announce(tx, a.id);
      });
      // Again once committed: a findLive that read the old row meanwhile does not keep it.
      live.drop(a.id);
    },
    async softDelete(accountId, id, deletedAtMs) {
      live.drop(id);
      const deleted = await sql.begin(async (tx) => {
        const res: { count: number } =
          await tx`UPDATE addresses SET deleted_at = ${deletedAtMs} WHERE id = ${id} AND account_id = ${accountId} AND deleted_at IS NULL`;
        if (res.count === 0) return false;
        await tx`UPDATE custom_domains SET deleted_at = ${deletedAtMs} WHERE address_id = ${id} AND deleted_at IS NULL`;
        await announce(tx, id);
        return true;
      });
      live.drop(id);
      return deleted;
    },
  };
}
