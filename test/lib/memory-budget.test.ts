// The memory budget for mail in flight (src/lib/memory-budget.ts, issue 15) as a table of
// steps: reservations that fit or not, growing and shrinking, a message larger than the
// whole budget taken alone, refusals counted per listener, and every byte given back.
import { describe, expect, test } from "bun:test";
import { costOf, MemoryBudget, type BudgetListener, type Reservation } from "../../src/lib/memory-budget.ts";

function budgetOf(capacity: number) {
  const refused: BudgetListener[] = [];
  let cap = capacity;
  const budget = new MemoryBudget(() => cap, { refused: (l) => refused.push(l) });
  return { budget, refused, setCapacity: (c: number) => (cap = c) };
}

describe("MemoryBudget", () => {
  test("reservations fit until the budget is full; the one past it is refused and counted", () => {
    const { budget, refused } = budgetOf(100);
    const a = budget.reserve(60, "inbound")!;
    const b = budget.reserve(40, "api")!;
    expect(budget.inFlightBytes).toBe(100);
    expect(budget.reserve(1, "submission")).toBeNull();
    expect(refused).toEqual(["submission"]);
    a.release();
    expect(budget.reserve(60, "inbound")).not.toBeNull();
    b.release();
  });

  test("a message larger than the whole budget is taken when nothing else is in flight, and only then", () => {
    const { budget } = budgetOf(100);
    const small = budget.reserve(10, "inbound")!;
    expect(budget.fits(500)).toBe(false);
    expect(budget.reserve(500, "inbound")).toBeNull();
    small.release();
    expect(budget.fits(500)).toBe(true);
    const big = budget.reserve(500, "inbound")!;
    expect(budget.inFlightBytes).toBe(500);
    // Alone it may grow too; nothing else fits beside it.
    expect(big.resize(700)).toBe(true);
    expect(budget.reserve(1, "api")).toBeNull();
    big.release();
    expect(budget.inFlightBytes).toBe(0);
  });

  test("resize: growing within the budget, refused past it (unchanged), shrinking always", () => {
    const { budget } = budgetOf(100);
    const a = budget.reserve(30, "inbound")!;
    const b = budget.reserve(30, "inbound")!;
    expect(a.resize(70)).toBe(true);
    expect(budget.inFlightBytes).toBe(100);
    expect(b.resize(31)).toBe(false);
    expect(b.bytes).toBe(30);
    expect(a.resize(10)).toBe(true);
    expect(budget.inFlightBytes).toBe(40);
    expect(a.resize(0)).toBe(true);
    expect(budget.fits(100)).toBe(false); // a still holds its place, with 0 bytes
    a.release();
    b.release();
    expect(budget.inFlightBytes).toBe(0);
    expect(budget.fits(1000)).toBe(true);
  });

  test("release gives back what the reservation holds, once; a released one cannot grow", () => {
    const { budget } = budgetOf(100);
    const a: Reservation = budget.reserve(50, "inbound")!;
    a.resize(80);
    a.release();
    a.release();
    expect(budget.inFlightBytes).toBe(0);
    expect(a.active).toBe(false);
    expect(a.resize(10)).toBe(false);
    expect(budget.inFlightBytes).toBe(0);
  });

  test("the capacity is read at each reservation (a reload applies at once)", () => {
    const { budget, setCapacity } = budgetOf(100);
    const a = budget.reserve(90, "inbound")!;
    expect(budget.fits(20)).toBe(false);
    setCapacity(200);
    expect(budget.fits(20)).toBe(true);
    a.release();
  });

  test("deliveries (no listener) wait without counting as refusals", () => {
    const { budget, refused } = budgetOf(10);
    const a = budget.reserve(10, "inbound")!;
    expect(budget.reserve(5, null)).toBeNull();
    expect(refused).toEqual([]);
    a.release();
  });

  test("costOf: copies of the size plus the fixed part, rounded up", () => {
    const cases: [copies: number, fixed: number, bytes: number, cost: number][] = [
      [4, 256, 1000, 4256],
      [3, 0, 1, 3],
      [2.5, 10, 3, 18],
      [3, 64, 0, 64],
    ];
    for (const [copies, fixedBytes, bytes, cost] of cases) expect(costOf({ copies, fixedBytes }, bytes)).toBe(cost);
  });
});
