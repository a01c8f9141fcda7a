// CoalescedReads (issue 38): reads that arrive while one is under way go together in the
// next; the first on an idle reader starts at once; a failed read fails only its batch.
import { expect, test } from "bun:test";
import { CoalescedReads } from "../../src/lib/coalesced-reads.ts";

/** A reader that doubles numbers, recording each batch it was asked, answering after `ms`. */
function doubler(ms = 5, failOn?: number) {
  const batches: number[][] = [];
  const reads = new CoalescedReads<number, number>(async (queries) => {
    batches.push([...queries]);
    await Bun.sleep(ms);
    if (failOn !== undefined && queries.includes(failOn)) throw new Error(`cannot read ${failOn}`);
    return queries.map((q) => q * 2);
  }, 3);
  return { reads, batches };
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
