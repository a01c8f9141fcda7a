// src/store/pg-shared-tx.ts (issue 38): PostgreSQL writes that arrive together share a
// transaction. Each must get its own result, only after the commit; one that fails must
// fail alone while the others are stored; and a write on an idle server must not wait.
import { expect } from "bun:test";
import { PgSharedTransactions } from "../../src/store/pg-shared-tx.ts";
import { requireTools } from "../helpers/tools.ts";
import { scratchPostgres } from "../helpers/postgres.ts";

const it = requireTools("postgresql");
const scratch = scratchPostgres("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)");
const db = () => scratch.sql();

it("writes made at once each get their own result after the commit; the one that fails fails alone", async () => {
  const shared = new PgSharedTransactions(db());
  const write = (id: number) =>
    shared.run(async (tx) => {
      const rows: { id: number }[] = await tx`INSERT INTO t (id, v) VALUES (${id}, ${`v${id}`}) RETURNING id`;
      return rows[0]!.id * 10;
    });
  await write(1);
  // 2..7 at once, the fifth repeating id 1 (a primary key violation).
  const ids = [2, 3, 4, 5, 1, 6, 7];
  const outcomes = await Promise.allSettled(ids.map(write));
  expect(outcomes.map((o) => (o.status === "fulfilled" ? o.value : "rejected"))).toEqual([20, 30, 40, 50, "rejected", 60, 70]);
  const stored: { id: number }[] = await db()`SELECT id FROM t ORDER BY id`;
  expect(stored.map((r) => r.id)).toEqual([1, 2, 3, 4, 5, 6, 7]);
});

it("a lone write on an idle server commits at once, and writes beyond the bound go in the next transaction", async () => {
  const shared = new PgSharedTransactions(db(), 2);
  const t0 = performance.now();
  expect(await shared.run(async (tx) => (await tx`SELECT 1 AS one`)[0].one)).toBe(1);
  expect(performance.now() - t0).toBeLessThan(1000);
  // Five at once with at most two per transaction: every one runs.
  const txids = await Promise.all(
    Array.from({ length: 5 }, () => shared.run(async (tx) => String((await tx`SELECT txid_current() AS id`)[0].id))),
  );
  expect(txids.length).toBe(5);
  // The first starts alone; the four that waited share transactions two by two.
  expect(new Set(txids).size).toBe(3);
});
