import { describe, expect, test } from "bun:test";
import { isAddress, parseAddressList } from "../../src/outbound/compose/addresses.ts";
import { mxHostsFrom } from "../../src/outbound/delivery/mx.ts";
import { parseSmarthost } from "../../src/outbound/delivery/next-hop.ts";
import { firstAttemptAt, nextRetryAt, retriesExhausted, verdictForReply } from "../../src/outbound/queue/schedule.ts";

const MIN = 60_000;

describe("verdictForReply", () => {
  test.each([
    [250, "delivered"],
    [251, "delivered"],
    [421, "retry"],
    [450, "retry"],
    [451, "retry"],
    [452, "retry"],
    [500, "bounce"],
    [550, "bounce"],
    [554, "bounce"],
    [null, "retry"],
    [354, "retry"],
  ])("%p → %p", (code, verdict) => expect(verdictForReply(code)).toBe(verdict as never));
});

describe("nextRetryAt: the schedule, its last step repeating", () => {
  const delays = [5 * MIN, 15 * MIN, 60 * MIN];
  test.each([
    [1, 5 * MIN],
    [2, 15 * MIN],
    [3, 60 * MIN],
    [4, 60 * MIN],
    [40, 60 * MIN],
  ])("after attempt %p wait %p ms", (attempts, wait) => expect(nextRetryAt(attempts, 1000, delays)).toBe(1000 + wait));

  test("the default schedule reaches about 5 days in 21 attempts", () => {
    const defaults = [5, 15, 30, 60, 120, 240, 480].map((m) => m * MIN);
    let at = 0;
    let attempts = 1;
    while (!retriesExhausted(0, nextRetryAt(attempts, at, defaults), 5 * 24 * 60 * MIN)) at = nextRetryAt(attempts++, at, defaults);
    expect(attempts).toBe(21);
    expect(at / (24 * 60 * MIN)).toBeCloseTo(4.98, 1);
  });
});

describe("firstAttemptAt", () => {
  test("standard and priority mail goes at once; digest mail waits for the next window", () => {
    expect(firstAttemptAt("standard", 1234, 15 * MIN)).toBe(1234);
    expect(firstAttemptAt("priority", 1234, 15 * MIN)).toBe(1234);
    expect(firstAttemptAt("digest", 1 * MIN, 15 * MIN)).toBe(15 * MIN);
    expect(firstAttemptAt("digest", 14 * MIN, 15 * MIN)).toBe(15 * MIN);
    expect(firstAttemptAt("digest", 15 * MIN, 15 * MIN)).toBe(15 * MIN);
  });
});

describe("mxHostsFrom", () => {
  const fixed = () => 0.5;
  test.each([
    [
      [
        { exchange: "b.example", priority: 20 },
        { exchange: "A.example.", priority: 10 },
      ],
      ["a.example", "b.example"],
    ],
    [[{ exchange: ".", priority: 0 }], "null"],
    [[{ exchange: "", priority: 0 }], "null"],
    [[], "null"],
  ])("%j → %j", (records, hosts) => expect(mxHostsFrom(records, fixed)).toEqual(hosts as never));

  test("equal preferences are shuffled", () => {
    const records = [
      { exchange: "a.example", priority: 10 },
      { exchange: "b.example", priority: 10 },
    ];
    const orders = new Set<string>();
    for (let i = 0; i < 50; i++) orders.add(JSON.stringify(mxHostsFrom(records)));
    expect(orders.size).toBe(2);
  });
});

describe("addresses", () => {
  test.each([
    ["a@b.example", [{ address: "a@b.example", name: "" }]],
    [
      '"Doe, John" <john@x.example>, jane@y.example',
      [
        { address: "john@x.example", name: "Doe, John" },
        { address: "jane@y.example", name: "" },
      ],
    ],
    ["Jörg <j@bücher.de>", [{ address: "j@bücher.de", name: "Jörg" }]],
  ])("%p", (input, out) => expect(parseAddressList(input)).toEqual(out));
  test.each([["nobody"], ["a@b"], ["a@@b.example"], ["Group: a@b.example;"], ["a@b.example\r\nBcc: c@d.example"]])(
    "%p is refused",
    (input) => {
      expect(() => parseAddressList(input)).toThrow();
    },
  );
  test("isAddress", () => {
    expect(isAddress("user+tag@sub.example.org")).toBe(true);
    expect(isAddress("user@example.org>")).toBe(false);
    expect(isAddress("user@.example.org")).toBe(false);
  });
});

describe("parseSmarthost", () => {
  test.each([
    ["smtp://relay.example:2525", { host: "relay.example", port: 2525, secure: false, auth: null }],
    ["smtp://user:p%40ss@relay.example", { host: "relay.example", port: 587, secure: false, auth: { user: "user", pass: "p@ss" } }],
    ["smtps://relay.example", { host: "relay.example", port: 465, secure: true, auth: null }],
  ])("%p", (url, parsed) => expect(parseSmarthost(url)).toEqual(parsed));
});
