// Lanes (issue 29, pools with destinations): a claim's recipients grouped by domain and
// pool, each group's lane the destination's window from the pool's addresses ("default"
// without a pool); a claim leaves a destination alone only when all its lanes are busy.
import { describe, expect, test } from "bun:test";
import type { IpPoolConfig } from "../../src/config/config.ts";
import { groupKeyOf, LaneBook, laneOf, sourceOf } from "../../src/outbound/delivery/lanes.ts";
import type { ResolvedDestination } from "../../src/outbound/destinations/rules.ts";
import type { ClaimedRecipient } from "../../src/outbound/queue/message.ts";

const pool = (name: string, ...ips: string[]): IpPoolConfig => ({
  name,
  addresses: ips.map((ip) => ({ ip, helo: `h.${ip}`, warmup: null })),
});
const BULK = pool("bulk", "192.0.2.1", "192.0.2.2");
const TX = pool("tx", "192.0.2.9");
const RULE = { name: "gmail", mx: [".google.com"], maxConnections: 3, rate: null, throttleReplies: [], pauseMs: 60_000 };
const GMAIL: ResolvedDestination = { name: "gmail", windowKey: "rule gmail", rule: RULE as never };
const item = (domain: string, outbound: string) =>
  ({ recipient: { domain }, message: { outboundAccountId: outbound } }) as ClaimedRecipient;

describe("LaneBook.targets", () => {
  test("one target per domain and pool; the lane is the destination from the pool's addresses", () => {
    const book = new LaneBook();
    const items = [item("gmail.com", "o-bulk"), item("googlemail.com", "o-bulk"), item("gmail.com", "o-tx"), item("gmail.com", "o-none")];
    const pools: Record<string, IpPoolConfig | null> = { "o-bulk": BULK, "o-tx": TX, "o-none": null };
    const resolved = new Map([
      ["gmail.com", GMAIL],
      ["googlemail.com", GMAIL],
    ]);
    const { targets, keyOf } = book.targets(items, (i) => pools[i.message.outboundAccountId]!, resolved);
    expect([...targets.values()].map((t) => [t.domain, t.pool?.name ?? null, t.lane])).toEqual([
      ["gmail.com", "bulk", "rule gmail from 192.0.2.1,192.0.2.2"],
      ["googlemail.com", "bulk", "rule gmail from 192.0.2.1,192.0.2.2"],
      ["gmail.com", "tx", "rule gmail from 192.0.2.9"],
      ["gmail.com", null, "rule gmail from default"],
    ]);
    expect(keyOf.get(items[2]!)).toBe(groupKeyOf("gmail.com", TX));
    expect(book.ruleOf("rule gmail from 192.0.2.9")?.maxConnections).toBe(3);
  });

  test("sourceOf: the pool's addresses, else default", () => {
    expect([sourceOf(BULK), sourceOf(null)]).toEqual(["192.0.2.1,192.0.2.2", "default"]);
  });
});

describe("LaneBook.allBusy", () => {
  const book = new LaneBook();
  book.targets(
    [item("gmail.com", "a"), item("gmail.com", "b")],
    (i) => (i.message.outboundAccountId === "a" ? BULK : TX),
    new Map([["gmail.com", GMAIL]]),
  );
  const bulkLane = laneOf("rule gmail", sourceOf(BULK));
  const txLane = laneOf("rule gmail", sourceOf(TX));
  test.each([
    ["no lane busy", [], false],
    ["one pool's lane full: the other pool's mail is still claimed", [bulkLane], false],
    ["every lane of the destination busy", [bulkLane, txLane], true],
  ])("%s", (_, busy, want) => {
    expect(book.allBusy(GMAIL, (lane) => (busy as string[]).includes(lane))).toBe(want);
  });
  test("a destination no claim has seen: its default lane decides", () => {
    const other: ResolvedDestination = { name: "x.test", windowKey: "mx mx.x.test", rule: null };
    expect(book.allBusy(other, (lane) => lane === laneOf("mx mx.x.test"))).toBe(true);
    expect(book.allBusy(other, () => false)).toBe(false);
  });
});
