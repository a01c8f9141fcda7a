// SQL for idempotent sends (idempotency.ts), written once for both engines: a key is
// claimed when its request starts, answered in the transaction that queues its message
// (recordAnswer, a Script the outgoing queue runs in its own transaction), released when
// the request fails, and purged by retention (src/jobs/purges.repo.ts).
//
// Several nodes may claim keys in one database (PostgreSQL), so a claim is one transaction
// that takes the key's row for itself before deciding: INSERT ... ON CONFLICT DO NOTHING
// creates a new claim (a concurrent insert of the same key waits for the other
// transaction, then does nothing), else SELECT ... FOR UPDATE locks the row that is there
// until the decision is written. Two requests claiming one key at once cannot both get
// "claim". On SQLite the transaction holds the one write lock from its start.
import type { Db } from "../../store/db/db.ts";
import { forUpdate, toInt } from "../../store/db/dialect.ts";
import { run, type Script } from "../../store/db/script.ts";
import { sql } from "../../store/db/sql.ts";
import { findKey, type KeyAnswer, type KeyFinding, type KeyRef } from "./idempotency.ts";
import type { IdempotencyRepo } from "./idempotency.port.ts";

interface Row {
  request_sha256: string | null;
  answer: string | null;
  created_at: unknown;
}

/**
 * Insert-or-lock rounds before giving up: a round finds no row only when the key's row was
 * deleted (a release, the purge) between its insert and its lock, which the next round sees.
 */
const MAX_CLAIM_ROUNDS = 5;

async function claimIn(tx: Db, ref: KeyRef, nowMs: number, keepMs: number | null): Promise<KeyFinding> {
  const { outboundAccountId: account, scope, key } = ref;
  const where = sql`outbound_account_id = ${account} AND scope = ${scope} AND key = ${key}`;
  for (let round = 0; round < MAX_CLAIM_ROUNDS; round++) {
    const inserted = await tx.all(sql`INSERT INTO idempotency_keys (outbound_account_id, scope, key, request_sha256, answer, created_at)
      VALUES (${account}, ${scope}, ${key}, NULL, NULL, ${nowMs}) ON CONFLICT DO NOTHING RETURNING 1 AS new`);
    if (inserted.length === 1) return { kind: "claim" };
    const row = await tx.get<Row>(sql`SELECT request_sha256, answer, created_at FROM idempotency_keys WHERE ${where} ${forUpdate}`);
    if (!row) continue;
    const found = findKey(
      { requestSha256: row.request_sha256, answer: row.answer, createdAtMs: toInt(row.created_at, "idempotency_keys.created_at") },
      nowMs,
      keepMs,
    );
    // A key past its keeping time is claimed afresh.
    if (found.kind === "claim") {
      await tx.run(sql`UPDATE idempotency_keys SET request_sha256 = NULL, answer = NULL, created_at = ${nowMs} WHERE ${where}`);
    }
    return found;
  }
  throw new Error(`idempotency key ${scope}/${key}: its row kept disappearing while claimed`);
}

/**
 * The repository on `db`. On SQLite give it the log connection (store.log): a claim needs
 * no fsync, one lost in a crash would be dropped at start-up anyway; the answer is durable,
 * committed with the message (recordAnswer).
 */
export function createIdempotencyRepo(db: Db): IdempotencyRepo {
  return {
    claim: (ref, nowMs, keepMs) => db.tx((tx) => claimIn(tx, ref, nowMs, keepMs)),
    async release(ref) {
      await db.run(sql`DELETE FROM idempotency_keys
        WHERE outbound_account_id = ${ref.outboundAccountId} AND scope = ${ref.scope} AND key = ${ref.key} AND answer IS NULL`);
    },
    dropUnanswered: async () => (await db.run(sql`DELETE FROM idempotency_keys WHERE answer IS NULL`)).changes,
  };
}

/**
 * The repository as a single-process appliance (SQLite) starts: a claim without an answer
 * belongs to a request that is gone, and is dropped (its key is free again) before the
 * repository is handed out, so before anything can claim a key.
 */
export async function idempotencyAtStart(db: Db): Promise<IdempotencyRepo> {
  const repo = createIdempotencyRepo(db);
  await repo.dropUnanswered();
  return repo;
}

/** Stores a claimed key's answer; run inside the transaction that queues its message. */
export function* recordAnswer(a: KeyAnswer, nowMs: number): Script<void> {
  yield* run(sql`INSERT INTO idempotency_keys (outbound_account_id, scope, key, request_sha256, answer, created_at)
    VALUES (${a.outboundAccountId}, ${a.scope}, ${a.key}, ${a.requestSha256}, ${a.answer}, ${nowMs})
    ON CONFLICT (outbound_account_id, scope, key) DO UPDATE SET request_sha256 = excluded.request_sha256, answer = excluded.answer`);
}
