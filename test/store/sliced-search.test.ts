// The sliced search (sliced-search.ts) over a list in memory: the same page as one read of
// the whole window, whatever the slice; never more than the window read; the deadline
// looked at before each slice.
import { describe, expect, test } from "bun:test";
import type { Cursor } from "../../src/store/paging.ts";
import { SearchTimeoutError, slicedSearch, type SliceReader } from "../../src/store/sliced-search.ts";

/** Records 99 (newest) to 0; `match` says which match the search. */
function list(match: (n: number) => boolean) {
  const records = Array.from({ length: 100 }, (_, i) => 99 - i).map((n) => ({ createdAtMs: n, id: `r${n}` }));
  const after = (before: Cursor | null | undefined) => records.filter((r) => !before || r.createdAtMs < before.createdAtMs);
  const read = { records: 0, slices: 0 };
  const reader: SliceReader<number> = {
    edge(before, rows) {
      read.slices++;
      return after(before)[rows - 1] ?? null;
    },
    matches(before, edge, limit) {
      const slice = after(before).filter((r) => !edge || r.createdAtMs >= edge.createdAtMs);
      read.records += slice.length;
      return slice
        .filter((r) => match(r.createdAtMs))
        .slice(0, limit)
        .map((r) => r.createdAtMs);
    },
  };
  return { reader, read };
}

const every10 = (n: number) => n % 10 === 0;

describe("slicedSearch", () => {
  test.each([
    // [name, match, page, window, slice, rows, edge, records read]
    ["sparse: the window runs out", every10, { limit: 5 }, 30, 7, [90, 80, 70], 70, 30],
    ["sparse, one slice: the same page", every10, { limit: 5 }, 30, 30, [90, 80, 70], 70, 30],
    ["from a cursor", every10, { limit: 5, before: { createdAtMs: 70, id: "r70" } }, 30, 7, [60, 50, 40], 40, 30],
    ["the window reaches the list's end", every10, { limit: 5, before: { createdAtMs: 20, id: "r20" } }, 30, 7, [10, 0], null, 20],
    ["dense: the page fills in the first slice", () => true, { limit: 3 }, 30, 7, [99, 98, 97, 96], null, 7],
    ["page numbers skip matches inside the window", () => true, { limit: 3, offset: 3 }, 30, 7, [96, 95, 94, 93], null, 7],
    ["a page number past the window's matches: empty, at the edge", every10, { limit: 3, offset: 3 }, 30, 7, [], 70, 30],
  ])("%s", (_, match, page, window, slice, rows, edge, records) => {
    const { reader, read } = list(match);
    const answer = slicedSearch(reader, page, window, slice, Number.POSITIVE_INFINITY, () => 0);
    expect(answer.rows).toEqual(rows);
    expect(answer.edge?.createdAtMs ?? null).toBe(edge);
    expect(read.records).toBe(records);
  });

  test.each([
    // [clock readings before each slice, slices read before the deadline stopped it]
    [[0, 0, 0, 0, 0], null],
    [[0, 0, 11], 2],
    [[11], 0],
  ])("clock %p against a deadline of 10: SearchTimeoutError after %p slices (null: none, it ends)", (readings, slicesBeforeTimeout) => {
    const { reader, read } = list(() => false);
    let i = 0;
    const now = () => readings[Math.min(i++, readings.length - 1)]!;
    const run = () => slicedSearch(reader, { limit: 5 }, 50, 10, 10, now);
    if (slicesBeforeTimeout === null) return expect(run().rows).toEqual([]);
    expect(run).toThrow(SearchTimeoutError);
    expect(read.slices).toBe(slicesBeforeTimeout);
  });
});
