// SQL for accounts made through the operator API: the TenantRepo port (tenants.port.ts),
// written once for both engines against a Db. Every write runs in one transaction with its
// audit entry (audit.repo.ts) and a step of tenant_version, and announces the change on
// TENANT_CHANGES_CHANNEL (PostgreSQL; on commit only), so another node reloads its
// registry at once, and at the latest on its next poll of the version (tenant-sync.ts).
import type { Db } from "../store/db/db.ts";
import { announce, toFlag, toInt, toIntOrNull } from "../store/db/dialect.ts";
import { type Sql, sql } from "../store/db/sql.ts";
import type { AuditEntry } from "./audit.port.ts";
import { recordAudit } from "./audit.repo.ts";
import {
  MAX_LIVE_KEYS,
  type StoredAccount,
  type StoredKey,
  type StoredOutbound,
  type StoredToken,
  type TenantRepo,
} from "./tenants.port.ts";

/** The channel a write announces itself on (its payload is empty: a node reloads everything). */
export const TENANT_CHANGES_CHANNEL = "postroom_tenants";

interface AccountRow {
  id: string;
  name: string;
  rate_limit: string;
  test_mode: unknown;
  markdown: unknown;
  domain_targets: unknown;
  suspended: unknown;
  created_at: unknown;
  updated_at: unknown;
}
interface TokenRow {
  id: string;
  account_id: string;
  name: string;
  token_hash: string;
  read_only: unknown;
  created_at: unknown;
  last_used_at: unknown;
}
interface OutboundRow {
  id: string;
  account_id: string;
  name: string;
  send_rate_limit: string;
  ip_pool: string | null;
  test_mode: unknown;
  created_at: unknown;
}
interface KeyRow {
  id: string;
  outbound_account_id: string;
  key_hash: string;
  created_at: unknown;
}

const tokenOf = (r: TokenRow): StoredToken => ({
  id: r.id,
  accountId: r.account_id,
  name: r.name,
  tokenHash: r.token_hash,
  readOnly: toFlag(r.read_only, "tenant_api_tokens.read_only"),
  createdAtMs: toInt(r.created_at, "tenant_api_tokens.created_at"),
  lastUsedAtMs: toIntOrNull(r.last_used_at, "tenant_api_tokens.last_used_at"),
});
const keyOf = (r: KeyRow): StoredKey => ({
  id: r.id,
  outboundAccountId: r.outbound_account_id,
  keyHash: r.key_hash,
  createdAtMs: toInt(r.created_at, "tenant_outbound_keys.created_at"),
});

/**
 * The accounts of `rows` with their tokens, outbound accounts and keys, in creation order;
 * `which` is the condition on the accounts (alias a) that chose `rows`. Joined, not listed
 * by ID: a list of every account's ID would outgrow PostgreSQL's 65,535 parameters.
 */
async function withCredentials(db: Db, rows: AccountRow[], which: Sql): Promise<StoredAccount[]> {
  const tokens = await db.all<TokenRow>(sql`SELECT t.* FROM tenant_api_tokens t JOIN tenant_accounts a ON a.id = t.account_id
    WHERE ${which} ORDER BY t.created_at, t.id`);
  const outbounds = await db.all<OutboundRow>(sql`SELECT o.* FROM tenant_outbound_accounts o JOIN tenant_accounts a ON a.id = o.account_id
    WHERE ${which} ORDER BY o.created_at, o.id`);
  const keys =
    await db.all<KeyRow>(sql`SELECT k.* FROM tenant_outbound_keys k JOIN tenant_outbound_accounts o ON o.id = k.outbound_account_id
    JOIN tenant_accounts a ON a.id = o.account_id WHERE ${which} ORDER BY k.created_at, k.id`);
  const keysOf = groupBy(keys, (k) => k.outbound_account_id);
  const tokensOf = groupBy(tokens, (t) => t.account_id);
  const outboundsOf = groupBy(outbounds, (o) => o.account_id);
  const outboundOf = (o: OutboundRow): StoredOutbound => ({
    id: o.id,
    accountId: o.account_id,
    name: o.name,
    sendRateLimit: o.send_rate_limit,
    ipPool: o.ip_pool,
    testMode: toFlag(o.test_mode, "tenant_outbound_accounts.test_mode"),
    createdAtMs: toInt(o.created_at, "tenant_outbound_accounts.created_at"),
    keys: (keysOf.get(o.id) ?? []).map(keyOf),
  });
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    rateLimit: r.rate_limit,
    testMode: toFlag(r.test_mode, "tenant_accounts.test_mode"),
    markdown: toFlag(r.markdown, "tenant_accounts.markdown"),
    domainTargets: toFlag(r.domain_targets, "tenant_accounts.domain_targets"),
    suspended: toFlag(r.suspended, "tenant_accounts.suspended"),
    createdAtMs: toInt(r.created_at, "tenant_accounts.created_at"),
    updatedAtMs: toInt(r.updated_at, "tenant_accounts.updated_at"),
    tokens: (tokensOf.get(r.id) ?? []).map(tokenOf),
    outbound: (outboundsOf.get(r.id) ?? []).map(outboundOf),
  }));
}

const groupBy = <T>(rows: T[], key: (row: T) => string): Map<string, T[]> => {
  const out = new Map<string, T[]>();
  for (const r of rows) {
    const k = key(r);
    const list = out.get(k);
    if (list) list.push(r);
    else out.set(k, [r]);
  }
  return out;
};

const LIVE = sql`SELECT id, name, rate_limit, test_mode, markdown, domain_targets, suspended, created_at, updated_at
  FROM tenant_accounts a WHERE a.deleted_at IS NULL`;

export function createTenantRepo(db: Db): TenantRepo {
  /** A change: its statements, its audit entry and a step of the version, committed together. */
  const change = <T>(audit: AuditEntry, fn: (tx: Db) => Promise<T>): Promise<T> =>
    db.tx(async (tx) => {
      const result = await fn(tx);
      await recordAudit(tx, audit);
      await tx.run(sql`UPDATE tenant_version SET version = version + 1 WHERE id = 1`);
      await announce(tx, TENANT_CHANGES_CHANNEL, "");
      return result;
    });
  /** Whether the account is live: writes under a deleted one find nothing. */
  const live = async (tx: Db, accountId: string) =>
    (await tx.get(sql`SELECT id FROM tenant_accounts WHERE id = ${accountId} AND deleted_at IS NULL`)) !== null;
  return {
    async version() {
      const row = await db.get<{ version: unknown }>(sql`SELECT version FROM tenant_version WHERE id = 1`);
      return row ? toInt(row.version, "tenant_version.version") : 0;
    },
    async loadAll() {
      return withCredentials(db, await db.all<AccountRow>(sql`${LIVE} ORDER BY created_at, id`), sql`a.deleted_at IS NULL`);
    },
    async get(id) {
      const which = sql`a.deleted_at IS NULL AND a.id = ${id}`;
      const [account] = await withCredentials(db, await db.all<AccountRow>(sql`${LIVE} AND a.id = ${id}`), which);
      return account ?? null;
    },
    async idTaken(id) {
      const row = await db.get(sql`SELECT id FROM tenant_accounts WHERE id = ${id}
        UNION ALL SELECT id FROM tenant_outbound_accounts WHERE id = ${id}`);
      return row !== null;
    },
    createAccount(a, audit) {
      return change(audit, async (tx) => {
        await tx.run(sql`INSERT INTO tenant_accounts (id, name, rate_limit, test_mode, markdown, domain_targets, suspended, created_at, updated_at)
          VALUES (${a.id}, ${a.name}, ${a.rateLimit}, ${a.testMode}, ${a.markdown}, ${a.domainTargets}, ${a.suspended}, ${a.createdAtMs}, ${a.updatedAtMs})`);
      });
    },
    updateAccount(id, f, nowMs, audit) {
      return change(audit, async (tx) => {
        const { changes } = await tx.run(sql`UPDATE tenant_accounts SET name = ${f.name}, rate_limit = ${f.rateLimit},
          test_mode = ${f.testMode}, markdown = ${f.markdown}, domain_targets = ${f.domainTargets}, suspended = ${f.suspended},
          updated_at = ${nowMs} WHERE id = ${id} AND deleted_at IS NULL`);
        if (changes === 0) throw new NothingChanged();
        return true;
      }).catch(nothingIsFalse);
    },
    deleteAccount(id, nowMs, audit) {
      return change(audit, async (tx) => {
        const { changes } = await tx.run(
          sql`UPDATE tenant_accounts SET deleted_at = ${nowMs}, updated_at = ${nowMs} WHERE id = ${id} AND deleted_at IS NULL`,
        );
        if (changes === 0) throw new NothingChanged();
        await tx.run(sql`DELETE FROM tenant_api_tokens WHERE account_id = ${id}`);
        await tx.run(sql`DELETE FROM tenant_outbound_keys WHERE outbound_account_id IN
          (SELECT id FROM tenant_outbound_accounts WHERE account_id = ${id})`);
        return true;
      }).catch(nothingIsFalse);
    },
    addToken(t, audit) {
      return change(audit, async (tx) => {
        if (!(await live(tx, t.accountId))) throw new NothingChanged();
        await tx.run(sql`INSERT INTO tenant_api_tokens (id, account_id, name, token_hash, read_only, created_at, last_used_at)
          VALUES (${t.id}, ${t.accountId}, ${t.name}, ${t.tokenHash}, ${t.readOnly}, ${t.createdAtMs}, ${null})`);
        return true;
      }).catch(nothingIsFalse);
    },
    removeToken(accountId, tokenId, audit) {
      return change(audit, async (tx) => {
        const { changes } = await tx.run(sql`DELETE FROM tenant_api_tokens WHERE id = ${tokenId} AND account_id = ${accountId}`);
        if (changes === 0) throw new NothingChanged();
        return true;
      }).catch(nothingIsFalse);
    },
    addOutbound(o, audit) {
      return change(audit, async (tx) => {
        if (!(await live(tx, o.accountId))) throw new NothingChanged();
        await tx.run(sql`INSERT INTO tenant_outbound_accounts (id, account_id, name, send_rate_limit, ip_pool, test_mode, created_at)
          VALUES (${o.id}, ${o.accountId}, ${o.name}, ${o.sendRateLimit}, ${o.ipPool}, ${o.testMode}, ${o.createdAtMs})`);
        for (const k of o.keys) await insertKey(tx, k);
        return true;
      }).catch(nothingIsFalse);
    },
    addKey(accountId, key, audit) {
      return change(audit, async (tx) => {
        const owner = await tx.get(sql`SELECT o.id FROM tenant_outbound_accounts o JOIN tenant_accounts a ON a.id = o.account_id
          WHERE o.id = ${key.outboundAccountId} AND o.account_id = ${accountId} AND a.deleted_at IS NULL`);
        if (!owner) throw new NothingChanged("no_such_outbound");
        const row = await tx.get<{ n: unknown }>(
          sql`SELECT COUNT(*) AS n FROM tenant_outbound_keys WHERE outbound_account_id = ${key.outboundAccountId}`,
        );
        if (toInt(row?.n ?? 0, "count") >= MAX_LIVE_KEYS) throw new NothingChanged("too_many");
        await insertKey(tx, key);
        return "added" as const;
      }).catch((err) => {
        if (err instanceof NothingChanged && (err.why === "no_such_outbound" || err.why === "too_many")) return err.why;
        throw err;
      });
    },
    removeKey(accountId, outboundId, keyId, audit) {
      return change(audit, async (tx) => {
        const { changes } = await tx.run(sql`DELETE FROM tenant_outbound_keys WHERE id = ${keyId} AND outbound_account_id = ${outboundId}
          AND outbound_account_id IN (SELECT id FROM tenant_outbound_accounts WHERE account_id = ${accountId})`);
        if (changes === 0) throw new NothingChanged();
        return true;
      }).catch(nothingIsFalse);
    },
    async touchTokens(used) {
      for (const [id, atMs] of used)
        await db.run(sql`UPDATE tenant_api_tokens SET last_used_at = ${atMs}
          WHERE id = ${id} AND (last_used_at IS NULL OR last_used_at < ${atMs})`);
    },
  };
}

const insertKey = (tx: Db, k: StoredKey) =>
  tx.run(sql`INSERT INTO tenant_outbound_keys (id, outbound_account_id, key_hash, created_at)
    VALUES (${k.id}, ${k.outboundAccountId}, ${k.keyHash}, ${k.createdAtMs})`);

/** Rolls a change back that found nothing to change, so no audit entry or version step is left. */
class NothingChanged extends Error {
  constructor(readonly why = "nothing") {
    super(`nothing changed: ${why}`);
  }
}

const nothingIsFalse = (err: unknown): false => {
  if (err instanceof NothingChanged) return false;
  throw err;
};
