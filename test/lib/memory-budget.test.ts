// The memory budget for mail in flight (src/lib/memory-budget.ts, issue 15) as a table of
// steps: reservations that fit or not, growing and shrinking, a message larger than the
// whole budget taken alone, refusals counted per listener, and every byte given back.
// Issue 31: messages being received (readers) grow with their bytes, wait for room oldest
// first, are held to their client's share and out of the share kept for authenticated
// senders, and lose their reservation when they send nothing, wait too long, or hold up
// older ones while nothing moves.
import { describe, expect, test } from "bun:test";
import { costOf, MemoryBudget, type BudgetListener, type BudgetPolicy, type Reservation, type Who } from "../../src/lib/memory-budget.ts";
import { eventually } from "../helpers/sink.ts";

function budgetOf(capacity: number, policy: Partial<BudgetPolicy> = {}) {
  const refused: BudgetListener[] = [];
  let cap = capacity;
  const full: BudgetPolicy = { perClient: { percent: 100 }, reserved: { percent: 0 }, idleMs: 60_000, maxWaitMs: 60_000, ...policy };
  const budget = new MemoryBudget(
    () => cap,
    { refused: (l) => refused.push(l) },
    () => full,
  );
  return { budget, refused, setCapacity: (c: number) => (cap = c) };
}

const stranger = (clientKey: string): Who => ({ stranger: true, clientKey });
const reader = (budget: MemoryBudget, bytes: number, who: Who) => budget.reserve(bytes, "inbound", who, true)!;

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

  test("a message larger than the whole budget is taken when the others hold at most an eighth, and only then", () => {
    const { budget } = budgetOf(100);
    const small = budget.reserve(13, "inbound")!;
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
    expect(b.resize(31)).toBe(false); // b's own 30 is not "at most an eighth" beside a's 70
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

describe("readers (issue 31)", () => {
  test("a reader grows at once while there is room; past it, it waits and is granted, oldest first, when memory is given back", async () => {
    const { budget } = budgetOf(100);
    const a = reader(budget, 10, stranger("192.0.2.1"));
    const b = reader(budget, 10, stranger("192.0.2.2"));
    const c = reader(budget, 10, stranger("192.0.2.3"));
    expect(a.grow(60)).toBe(true);
    const bWaits = b.grow(40) as Promise<boolean>;
    expect(bWaits).toBeInstanceOf(Promise);
    const cWaits = c.grow(20) as Promise<boolean>;
    expect([b.waiting, c.waiting, budget.inFlightBytes]).toEqual([true, true, 80]);
    const granted: string[] = [];
    void bWaits.then((ok) => ok && granted.push("b"));
    void cWaits.then((ok) => ok && granted.push("c"));
    a.release();
    // b is granted at once; c, newer, leaves room for b while b still counts as growing
    // (granted in the last 2 s), then the budget's next look grants it: within 2.25 s.
    await eventually(() => granted.length === 1, 1000, "b granted");
    expect(granted).toEqual(["b"]);
    await eventually(() => granted.length === 2, 5000, "c granted");
    expect(granted).toEqual(["b", "c"]);
    expect(budget.inFlightBytes).toBe(60);
    b.release();
    c.release();
  });

  test("a newer reader leaves room for older ones still growing: it waits while the older one is granted", async () => {
    const { budget } = budgetOf(800);
    const old = reader(budget, 10, stranger("192.0.2.1"));
    expect(old.grow(100)).toBe(true);
    const young = reader(budget, 10, stranger("192.0.2.2"));
    // The second oldest leaves half free: it may grow to 800 - 100 - 400 = 300.
    expect(young.grow(300)).toBe(true);
    expect(young.grow(301)).toBeInstanceOf(Promise);
    old.release();
    young.release();
  });

  test("a first slice (a DATA before its 354) waits only for room, not behind older messages growing", () => {
    const { budget } = budgetOf(800);
    const old = reader(budget, 10, stranger("192.0.2.1"));
    expect(old.grow(500)).toBe(true);
    const data = budget.reserve(0, "inbound", stranger("192.0.2.2"), true)!;
    expect(data.grow(10)).toBe(true); // ranked, it would leave half free: 800 - 510 < 400
    expect(data.grow(20)).toBeInstanceOf(Promise); // growing past it, it is
    old.release();
    data.release();
  });

  test("one client holds at most its share; another client grows beside it; its oldest may pass the share", () => {
    const { budget } = budgetOf(1000, { perClient: { percent: 25 } });
    const first = reader(budget, 10, stranger("2001:db8:1:2::/64"));
    const second = reader(budget, 10, stranger("2001:db8:1:2::/64"));
    expect(first.grow(400)).toBe(true); // its oldest: past the share of 250
    expect(second.grow(20)).toBeInstanceOf(Promise);
    expect(second.waitingFor).toBe("client");
    const other = reader(budget, 10, stranger("192.0.2.9"));
    // Second oldest still growing in the pool (the waiter for its client's share does not count): it leaves half.
    expect(other.grow(80)).toBe(true);
    for (const r of [first, second, other]) r.release();
  });

  test("strangers never take the reserved share; authenticated senders and E11 do", () => {
    const { budget } = budgetOf(1000, { reserved: { percent: 25 } });
    const s = reader(budget, 10, stranger("192.0.2.1"));
    expect(s.grow(750)).toBe(true);
    expect(budget.reserve(10, "inbound", stranger("192.0.2.2"), true)).toBeNull();
    expect(budget.fits(100, stranger("192.0.2.2"))).toBe(false);
    const api = budget.reserve(200, "api");
    expect(api).not.toBeNull();
    const submission = budget.reserve(10, "submission", { stranger: false, clientKey: null }, true)!;
    expect(submission.grow(50)).toBe(true);
    for (const r of [s, api!, submission]) r.release();
  });

  test("a reader that sends nothing for the idle time loses its reservation; one that sends keeps it", async () => {
    const { budget } = budgetOf(1000, { idleMs: 300 });
    const idle = reader(budget, 100, stranger("192.0.2.1"));
    const busy = reader(budget, 100, stranger("192.0.2.2"));
    const evicted: string[] = [];
    idle.onEvict((why) => evicted.push(why));
    const touching = setInterval(() => busy.touch(), 50);
    await eventually(() => evicted.length === 1, 3000, "the idle reader evicted");
    clearInterval(touching);
    expect([evicted, idle.bytes, busy.bytes, budget.inFlightBytes]).toEqual([["idle"], 0, 100, 100]);
    expect(idle.grow(200)).toBe(false);
    idle.release();
    busy.release();
  });

  test("waiting past the max wait: evicted, its wait ends false", async () => {
    const { budget } = budgetOf(100, { maxWaitMs: 300 });
    const big = budget.reserve(100, "api")!;
    const r = reader(budget, 0, stranger("192.0.2.1"));
    const wait = r.grow(50) as Promise<boolean>;
    expect(await wait).toBe(false);
    expect(r.evictedBy).toBe("max_wait");
    big.release();
    r.release();
    expect(budget.inFlightBytes).toBe(0);
  });

  test("the oldest held up by newer readers that wait: they give way, newest first, and it grows at once", async () => {
    const { budget } = budgetOf(100);
    const a = reader(budget, 40, stranger("192.0.2.1"));
    const b = reader(budget, 5, stranger("192.0.2.2"));
    const c = reader(budget, 5, stranger("192.0.2.3"));
    const bWait = b.grow(40) as Promise<boolean>; // the oldest still growing: leaves nothing free for a
    expect(b.waiting).toBe(false);
    expect(c.grow(10)).toBeInstanceOf(Promise);
    expect(a.grow(58)).toBe(true); // c (the newest waiter) gives way; b is enough beside it
    expect([c.evictedBy, b.evictedBy, a.bytes, budget.inFlightBytes]).toEqual(["gave_way", null, 58, 98]);
    void bWait;
    for (const r of [a, b, c]) r.release();
  });

  test("newer readers that wait do not give way when together they would not make room enough", () => {
    const { budget } = budgetOf(100);
    const slow = reader(budget, 50, stranger("192.0.2.9")); // an older reader that stopped growing
    const a = reader(budget, 30, stranger("192.0.2.1"));
    const b = reader(budget, 5, stranger("192.0.2.2"));
    const c = reader(budget, 5, stranger("192.0.2.3"));
    expect(a.grow(31)).toBe(true); // a is growing: the newer ones leave it room
    expect(b.grow(10)).toBeInstanceOf(Promise);
    expect(c.grow(10)).toBeInstanceOf(Promise);
    expect(a.grow(60)).toBeInstanceOf(Promise); // 50 + 60 > 100 even without b and c
    expect([b.evictedBy, c.evictedBy, b.waiting, c.waiting]).toEqual([null, null, true, true]);
    for (const r of [slow, a, b, c]) r.release();
    expect(budget.inFlightBytes).toBe(0);
  });

  test("readers waiting for their client's share and nothing moving: the newest gives way after a second", async () => {
    const { budget } = budgetOf(1000, { perClient: { bytes: 100 } });
    const key = stranger("192.0.2.1");
    const first = reader(budget, 10, key);
    expect(first.grow(90)).toBe(true);
    const second = reader(budget, 5, key);
    const third = reader(budget, 5, key);
    const secondWait = second.grow(20) as Promise<boolean>;
    const thirdWait = third.grow(20) as Promise<boolean>;
    expect([second.waitingFor, third.waitingFor]).toEqual(["client", "client"]);
    expect(await thirdWait).toBe(false);
    expect([third.evictedBy, second.waiting]).toEqual(["stalled", true]);
    first.release();
    expect(await secondWait).toBe(true);
    second.release();
    third.release();
  });
});
