// SQL for idempotent sends (idempotency.ts) on PostgreSQL: the IdempotencyRepo port
// (idempotency.port.ts), the same semantics as idempotency.repo.ts on SQLite. Several
// nodes claim keys in one database, so a claim is one transaction that takes the key's
// row for itself before deciding: INSERT ... ON CONFLICT DO NOTHING creates a new claim
// (a concurrent insert of the same key waits for the other transaction, then does
// nothing), else SELECT ... FOR UPDATE locks the row that is there until the decision is
// written. Two nodes claiming one key at once cannot both get "claim".
import type { SQL, TransactionSQL } from "bun";
import { pgInteger } from "../../store/pg-values.ts";
import { findKey, type KeyAnswer, type KeyFinding, type KeyRef } from "./idempotency.ts";
import type { IdempotencyRepo } from "./idempotency.port.ts";
import { pgTablePurge } from "../../store/pg-purge-window.ts";
import type { Purge } from "../../store/purge-window.ts";

interface Row {
  request_sha256: string | null;
  answer: string | null;
  /** BIGINT: a string from Bun's SQL client. */
  created_at: string | bigint;
}

/**
 * Insert-or-lock rounds before giving up: a round finds no row only when the key's row was
 * deleted (a release, the purge) between its insert and its lock, which the next round sees.
 */
const MAX_CLAIM_ROUNDS = 5;

async function claimIn(tx: TransactionSQL, ref: KeyRef, nowMs: number, keepMs: number | null): Promise<KeyFinding> {
  const { outboundAccountId: account, scope, key } = ref;
  for (let round = 0; round < MAX_CLAIM_ROUNDS; round++) {
    const inserted = await tx`INSERT INTO idempotency_keys (outbound_account_id, scope, key, request_sha256, answer, created_at)
      VALUES (${account}, ${scope}, ${key}, NULL, NULL, ${nowMs}) ON CONFLICT DO NOTHING RETURNING 1 AS new`;
    if (inserted.length === 1) return { kind: "claim" };
    const rows: Row[] = await tx`SELECT request_sha256, answer, created_at FROM idempotency_keys
      WHERE outbound_account_id = ${account} AND scope = ${scope} AND key = ${key} FOR UPDATE`;
    const row = rows[0];
    if (!row) continue;
    const found = findKey(
      { requestSha256: row.request_sha256, answer: row.answer, createdAtMs: pgInteger(row.created_at, "idempotency_keys.created_at") },
      nowMs,
      keepMs,
    );
    // A key past its keeping time is claimed afresh, as SQLite's INSERT OR REPLACE does.
    if (found.kind === "claim") {
      await tx`UPDATE idempotency_keys SET request_sha256 = NULL, answer = NULL, created_at = ${nowMs}
        WHERE outbound_account_id = ${account} AND scope = ${scope} AND key = ${key}`;
    }
    return found;
  }
  throw new Error(`idempotency key ${scope}/${key}: its row kept disappearing while claimed`);
}

export function createPgIdempotencyRepo(sql: SQL): IdempotencyRepo {
  return {
    claim: (ref, nowMs, keepMs) => sql.begin((tx) => claimIn(tx, ref, nowMs, keepMs)),
    async release(ref) {
      await sql`DELETE FROM idempotency_keys WHERE outbound_account_id = ${ref.outboundAccountId} AND scope = ${ref.scope} AND key = ${ref.key} AND answer IS NULL`;
    },
    async dropUnanswered() {
      const result: { count: number } = await sql`DELETE FROM idempotency_keys WHERE answer IS NULL`;
      return result.count;
    },
  };
}

/**
 * Stores a claimed key's answer (recordAnswer on SQLite), for the transaction that queues
 * its message on PostgreSQL (the queue's PgQueuePorts).
 */
export async function pgRecordAnswer(sql: SQL | TransactionSQL, a: KeyAnswer, nowMs: number): Promise<void> {
  await sql`INSERT INTO idempotency_keys (outbound_account_id, scope, key, request_sha256, answer, created_at)
    VALUES (${a.outboundAccountId}, ${a.scope}, ${a.key}, ${a.requestSha256}, ${a.answer}, ${nowMs})
    ON CONFLICT (outbound_account_id, scope, key) DO UPDATE SET request_sha256 = EXCLUDED.request_sha256, answer = EXCLUDED.answer`;
}

/** The retention purge (createIdempotencyPurge on SQLite): answered keys created before the cutoff; a claim in flight is kept. */
export const createPgIdempotencyPurge = (sql: SQL): Purge => pgTablePurge(sql, "idempotency_keys", "created_at", sql`answer IS NULL`);
