// The all-addresses view's merge: newest first across addresses, and nothing shown that a
// page not read yet could still precede.
import { describe, expect, test } from "bun:test";
import { mergedItems } from "../../src/dashboard/ui/merge.ts";

const at = (id: string, minute: number) => ({ id, created_at: `2026-11-27T18:${String(minute).padStart(2, "0")}:00.000Z` });

describe("mergedItems", () => {
  test("every source read to its end: all items, newest first", () => {
    const merged = mergedItems([
      { items: [at("a2", 30), at("a1", 10)], next: null },
      { items: [at("b1", 20)], next: null },
    ]);
    expect(merged.map((i) => i.id)).toEqual(["a2", "b1", "a1"]);
  });

  test("a source with more to read holds back what is older than its oldest item read", () => {
    const merged = mergedItems([
      { items: [at("a2", 50), at("a1", 40)], next: "/a?before=a1" },
      { items: [at("b2", 45), at("b1", 5)], next: null },
    ]);
    expect(merged.map((i) => i.id)).toEqual(["a2", "b2"]);
  });

  test("a source with more to read and nothing read yet (a search window) holds back everything", () => {
    expect(
      mergedItems([
        { items: [], next: "/a?before=x" },
        { items: [at("b1", 5)], next: null },
      ]),
    ).toEqual([]);
  });
});
