// Coalescer (issue 38): items that arrive while a run is under way go together in the
// next; the first on an idle coalescer starts at once; a failed run fails only its batch,
// or, with `alone`, only the item at fault.
import { expect, test } from "bun:test";
import { Coalescer } from "../../src/lib/coalescer.ts";

/** A reader that doubles numbers, recording each batch it was asked, answering after `ms`. */
function doubler(ms = 5, failOn?: number, retryAlone = false) {
  const batches: number[][] = [];
  const runAll = async (queries: readonly number[]) => {
    batches.push([...queries]);
    await Bun.sleep(ms);
    if (failOn !== undefined && queries.includes(failOn)) throw new Error(`cannot read ${failOn}`);
    return queries.map((q) => q * 2);
  };
  const alone = retryAlone ? async (n: number) => (await runAll([n]))[0]! : undefined;
  const coalescer = new Coalescer<number, number>(runAll, { maxPerRun: 3, alone });
  return { reads: { read: (n: number) => coalescer.submit(n) }, batches };
}

test("the first read starts at once; those that arrive meanwhile go together, at most maxPerRead", async () => {
  const { reads, batches } = doubler();
  const results = await Promise.all([1, 2, 3, 4, 5, 6].map((n) => reads.read(n)));
  expect(results).toEqual([2, 4, 6, 8, 10, 12]);
  expect(batches).toEqual([[1], [2, 3, 4], [5, 6]]);
  // Idle again: the next read starts at once, alone.
  expect(await reads.read(7)).toBe(14);
  expect(batches.at(-1)).toEqual([7]);
});

test("a read that fails fails its batch only", async () => {
  const { reads, batches } = doubler(5, 3);
  const settled = await Promise.allSettled([1, 2, 3, 4, 5, 6].map((n) => reads.read(n)));
  expect(batches).toEqual([[1], [2, 3, 4], [5, 6]]);
  expect(settled.map((s) => s.status)).toEqual(["fulfilled", "rejected", "rejected", "rejected", "fulfilled", "fulfilled"]);
  expect((settled[1] as PromiseRejectedResult).reason.message).toBe("cannot read 3");
});

test("with alone, each item of a failed run is done again on its own: only the one at fault fails", async () => {
  const { reads, batches } = doubler(5, 3, true);
  const settled = await Promise.allSettled([1, 2, 3, 4].map((n) => reads.read(n)));
  expect(batches).toEqual([[1], [2, 3, 4], [2], [3], [4]]);
  expect(settled.map((s) => s.status)).toEqual(["fulfilled", "fulfilled", "rejected", "fulfilled"]);
  expect(settled.map((s) => (s.status === "fulfilled" ? s.value : null))).toEqual([2, 4, null, 8]);
});
