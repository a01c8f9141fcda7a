// Accepting messages on PostgreSQL, several sends sharing one transaction (issue 38): each
// insert in a transaction of its own paid a BEGIN, a COMMIT (a WAL flush, with
// synchronous_commit on) and a round trip per row, about eight per message. Sends that
// arrive while a batch is committing wait for it and then go together: one transaction,
// multi-row INSERTs (writeMessages), one flush. An idle server commits a lone send at once,
// so nothing waits for a timer. As on SQLite (src/store/group-commit.ts), every send
// resolves only after the commit that holds it, so a 202 still means on disk, and a send
// that fails fails alone: a batch that fails is retried one send per transaction.
import type { SQL, TransactionSQL } from "bun";
import { PgBatchWriter } from "../../store/pg-batch-writer.ts";
import type { PgQueuePorts } from "./ports.ts";
import { writeMessages } from "./queue-write.pg.repo.ts";
import type { KeyAnswer } from "../sending/idempotency.ts";

/** Sends per shared transaction at most; more wait for the next one. */
export const PG_INSERTS_PER_TRANSACTION = 100;

/** A message's rows as writeMessages takes them (its bytes when given). */
type Queued = Parameters<typeof writeMessages>[2][number];

export interface PgInsert {
  queued: Queued;
  answer?: KeyAnswer;
  webhook?: boolean;
}

export class PgInsertBatcher {
  private readonly batches: PgBatchWriter<PgInsert>;

  constructor(
    sql: SQL,
    private readonly ports: PgQueuePorts,
    maxPerTransaction = PG_INSERTS_PER_TRANSACTION,
  ) {
    this.batches = new PgBatchWriter<PgInsert>(
      sql,
      async (tx, batch) => {
        await this.write(tx, batch);
        return [];
      },
      maxPerTransaction,
    );
  }

  /** Stores the send with whichever others are waiting (PgBatchWriter); resolves once committed. */
  insert(item: PgInsert): Promise<void> {
    return this.batches.write(item);
  }

  private async write(tx: TransactionSQL, batch: readonly PgInsert[]): Promise<void> {
    // writeMessages takes one webhook setting for its events: one call per setting.
    for (const webhook of [undefined, true, false]) {
      const group = batch.filter((w) => w.webhook === webhook);
      if (group.length > 0)
        await writeMessages(
          tx,
          this.ports,
          group.map((w) => w.queued),
          webhook,
        );
    }
    for (const w of batch) if (w.answer) await this.ports.answers.record(tx, w.answer, w.queued.message.createdAtMs);
  }
}
