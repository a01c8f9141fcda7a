// src/store/pg-batch-writer.ts (issue 38): PostgreSQL writes of one kind that arrive
// together are written together, in one transaction and one call of the batch's writer.
// Each resolves only after the commit; one that fails fails alone while the others are
// stored; a write on an idle server does not wait; more than the bound go in the next batch.
import { expect } from "bun:test";
import type { TransactionSQL } from "bun";
import { PgBatchWriter } from "../../src/store/pg-batch-writer.ts";
import { requireTools } from "../helpers/tools.ts";
import { scratchPostgres } from "../helpers/postgres.ts";

const it = requireTools("postgresql");
const scratch = scratchPostgres("CREATE TABLE t (id INTEGER PRIMARY KEY, tx TEXT NOT NULL)");
const db = () => scratch.sql();

/** Each call's ids, and a writer that inserts them in one multi-row INSERT, noting its transaction. */
function writer(max?: number) {
  const calls: number[][] = [];
  const write = async (tx: TransactionSQL, items: readonly number[]) => {
    calls.push([...items]);
    const [{ id }] = await tx`SELECT txid_current()::text AS id`;
    await tx`INSERT INTO t ${tx(items.map((i) => ({ id: i, tx: id })))}`;
    return [];
  };
  return { calls, batches: new PgBatchWriter<number>(db(), write, max) };
}

it("writes made at once are stored by one call in one transaction; one that fails fails alone", async () => {
  const { calls, batches } = writer();
  await batches.write(1);
  // 2..7 at once, the fifth repeating id 1 (a primary key violation): the batch is rolled
  // back and each written again alone.
  const ids = [2, 3, 4, 5, 1, 6, 7];
  const outcomes = await Promise.allSettled(ids.map((i) => batches.write(i)));
  expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "fulfilled", "fulfilled", "fulfilled", "rejected", "fulfilled", "fulfilled"]);
  // The first starts at once on the idle writer; the six that waited go in one call.
  expect(calls.slice(1, 3)).toEqual([[2], [3, 4, 5, 1, 6, 7]]);
  const stored: { id: number }[] = await db()`SELECT id FROM t ORDER BY id`;
  expect(stored.map((r) => r.id)).toEqual([1, 2, 3, 4, 5, 6, 7]);
  // Without a fault, writes that waited share one call and one transaction.
  await db()`DELETE FROM t`;
  calls.length = 0;
  await Promise.all([10, 11, 12, 13].map((i) => batches.write(i)));
  expect(calls).toEqual([[10], [11, 12, 13]]);
  const txs: { n: string }[] = await db()`SELECT COUNT(DISTINCT tx)::text AS n FROM t`;
  expect(txs[0]!.n).toBe("2");
});

it("a lone write on an idle server commits at once, and writes beyond the bound go in the next batch", async () => {
  const { calls, batches } = writer(2);
  const t0 = performance.now();
  await batches.write(100);
  expect(performance.now() - t0).toBeLessThan(1000);
  expect((await db()`SELECT id FROM t WHERE id = 100`).length).toBe(1);
  calls.length = 0;
  await Promise.all([101, 102, 103, 104, 105].map((i) => batches.write(i)));
  expect(calls).toEqual([[101], [102, 103], [104, 105]]);
});
