// The decisions of the memory budget (src/lib/memory-shares.ts, issue 31) as tables: the
// shares, the room a newer message leaves the older ones, who may grow and who waits (for
// the pool or for its client's share), what may be taken at once, and the client key an
// IPv6 client is counted by (its /64).
import { describe, expect, test } from "bun:test";
import { parseSizeBytes } from "../../src/config/units.ts";
import { clientKey } from "../../src/smtp/limits.ts";
import {
  growVerdict,
  keptFreeFor,
  parseShare,
  scopeAllows,
  shareBytes,
  takeFits,
  type GrowRequest,
  type GrowVerdict,
  type ScopeView,
  type Share,
} from "../../src/lib/memory-shares.ts";

describe("shares", () => {
  test("parseShare: a percentage or a size; anything else (or past 100%) is null", () => {
    const cases: [string, Share | null][] = [
      ["25%", { percent: 25 }],
      [" 12.5 % ", { percent: 12.5 }],
      ["100%", { percent: 100 }],
      ["0%", { percent: 0 }],
      ["64MB", { bytes: 64 * 1024 * 1024 }],
      ["101%", null],
      ["quarter", null],
    ];
    for (const [text, share] of cases) expect([text, parseShare(text, parseSizeBytes)]).toEqual([text, share]);
  });

  test("shareBytes: a percentage of the capacity, or bytes never past it", () => {
    const cases: [Share, number, number][] = [
      [{ percent: 25 }, 1000, 250],
      [{ percent: 12.5 }, 1001, 125],
      [{ bytes: 300 }, 1000, 300],
      [{ bytes: 3000 }, 1000, 1000],
    ];
    for (const [share, capacity, bytes] of cases) expect(shareBytes(share, capacity)).toBe(bytes);
  });

  test("keptFreeFor: the k-th oldest leaves k/(k+1) free, at most seven eighths", () => {
    expect([0, 1, 2, 3, 7, 8, 50].map((rank) => keptFreeFor(rank, 840))).toEqual([0, 420, 560, 630, 735, 735, 735]);
  });
});

describe("who may grow", () => {
  const scope = (usedBytes: number, ownBytes: number, rank: number, capacityBytes = 800): ScopeView => ({
    capacityBytes,
    usedBytes,
    ownBytes,
    rank,
  });

  test("scopeAllows: the oldest up to the capacity (a client's past it, a pool's when the others hold little); the newer ones leave room", () => {
    const cases: [kind: "pool" | "client", view: ScopeView, delta: number, allowed: boolean][] = [
      ["pool", scope(700, 100, 0), 100, true],
      ["pool", scope(700, 100, 0), 101, false],
      ["pool", scope(700, 650, 0), 500, true], // the others hold 50, at most an eighth
      ["client", scope(700, 100, 0), 5000, true],
      ["pool", scope(300, 10, 1), 100, true], // leaves 400 = 1/2
      ["pool", scope(300, 10, 1), 101, false],
      ["client", scope(100, 10, 3), 100, true], // leaves 600 = 3/4
      ["client", scope(100, 10, 3), 101, false],
      ["pool", scope(50, 10, 20), 50, true], // leaves 700 = 7/8
      ["pool", scope(50, 10, 20), 51, false],
    ];
    for (const [kind, view, delta, allowed] of cases)
      expect([kind, view, delta, scopeAllows(kind, view, delta)]).toEqual([kind, view, delta, allowed]);
  });

  test("growVerdict: the client's share first, then the whole budget, then the pool", () => {
    const req = (over: Partial<GrowRequest>): GrowRequest => ({
      deltaBytes: 100,
      capacityBytes: 1000,
      usedBytes: 100,
      pool: scope(100, 50, 0, 750),
      client: scope(50, 50, 0, 250),
      ...over,
    });
    const cases: [name: string, GrowRequest, GrowVerdict][] = [
      ["room everywhere", req({}), "grow"],
      ["shrinking always", req({ deltaBytes: -10, usedBytes: 5000 }), "grow"],
      ["its client has others older still growing and no room", req({ client: scope(240, 20, 1, 250) }), "wait-client"],
      ["its client's oldest passes the share", req({ client: scope(240, 200, 0, 250) }), "grow"],
      ["the pool is full for a newer one", req({ usedBytes: 300, pool: scope(300, 50, 2, 750) }), "wait-pool"],
      ["the whole budget is full (submission fills the rest)", req({ usedBytes: 950, pool: scope(300, 50, 0, 750) }), "wait-pool"],
      [
        "the oldest passes the whole budget when the others hold little",
        req({ usedBytes: 1100, deltaBytes: 400, pool: scope(1100, 1050, 0, 750) }),
        "grow",
      ],
      ["not when they hold more than an eighth", req({ usedBytes: 1100, deltaBytes: 400, pool: scope(1100, 900, 0, 750) }), "wait-pool"],
      ["authenticated: no client share", req({ client: null, usedBytes: 900, pool: scope(900, 800, 0, 1000) }), "grow"],
    ];
    for (const [name, r, verdict] of cases) expect([name, growVerdict(r)]).toEqual([name, verdict]);
  });

  test("takeFits: within the whole budget and the strangers' pool, or past them when the others hold at most an eighth", () => {
    const whole = (usedBytes: number) => ({ capacityBytes: 1000, usedBytes });
    const pool = (usedBytes: number) => ({ capacityBytes: 750, usedBytes });
    const cases: [bytes: number, ReturnType<typeof whole>, ReturnType<typeof pool> | null, boolean][] = [
      [200, whole(800), null, true],
      [201, whole(800), null, false],
      [5000, whole(0), null, true],
      [5000, whole(125), null, true], // beside first slices
      [5000, whole(126), null, false],
      [100, whole(700), pool(700), false], // the reserved quarter is not for strangers
      [100, whole(700), pool(100), true],
      [900, whole(200), pool(0), false], // room in the pool, not in the budget
    ];
    for (const [bytes, w, p, fits] of cases) expect([bytes, w, p, takeFits(bytes, w, p)]).toEqual([bytes, w, p, fits]);
  });
});

describe("the client a stranger is counted as", () => {
  test("an IPv4 address; an IPv6 /64 (an IPv4-mapped address as IPv4)", () => {
    const cases: [string, string][] = [
      ["192.0.2.7", "192.0.2.7"],
      ["::ffff:192.0.2.7", "192.0.2.7"],
      ["2001:db8:1:2:aaaa::1", "2001:db8:1:2::/64"],
      ["2001:db8:1:2:bbbb:cccc:dddd:eeee", "2001:db8:1:2::/64"],
      ["2001:db8:1:3::1", "2001:db8:1:3::/64"],
    ];
    for (const [address, key] of cases) expect([address, clientKey(address)]).toEqual([address, key]);
  });
});
