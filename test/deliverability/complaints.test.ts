import { describe, expect, test } from "bun:test";
import { complaintRates, complaintWarnings, complaintWindowStartMs } from "../../src/deliverability/complaints.ts";

describe("complaintRates", () => {
  test.each([
    ["none", [{ key: "delivery", count: 1000 }], 0],
    [
      "1 in 1000",
      [
        { key: "delivery", count: 1000 },
        { key: "complaint", count: 1 },
      ],
      0.001,
    ],
    [
      "4 in 1000",
      [
        { key: "delivery", count: 600 },
        { key: "delivery", count: 400 },
        { key: "complaint", count: 4 },
      ],
      0.004,
    ],
    ["complaints without deliveries in the window", [{ key: "complaint", count: 2 }], 1],
  ])("%s", (_, rows, rate) => {
    expect(complaintRates(rows.map((r) => ({ outboundId: "o1", ...r })))[0]!.rate).toBeCloseTo(rate, 10);
  });

  test("one rate per outbound account, by ID", () => {
    const rates = complaintRates([
      { outboundId: "b", key: "delivery", count: 10 },
      { outboundId: "a", key: "complaint", count: 1 },
      { outboundId: "a", key: "delivery", count: 100 },
    ]);
    expect(rates).toEqual([
      { outboundId: "a", deliveries: 100, complaints: 1, rate: 0.01 },
      { outboundId: "b", deliveries: 10, complaints: 0, rate: 0 },
    ]);
  });
});

describe("complaintWarnings", () => {
  const rate = (complaints: number, deliveries: number) => ({ outboundId: "o1", complaints, deliveries, rate: complaints / deliveries });
  test.each([
    [rate(1, 1000), []],
    [rate(2, 1000), ["outbound account o1: 2 spam complaints for 1000 delivered in 24 h (0.2 %, above 0.1 %)"]],
    [rate(0, 1000), []],
  ])("%j", (r, want) => {
    const got = complaintWarnings([r], 0.001);
    expect(got.map((w) => w.split(";")[0])).toEqual(want);
  });
});

test("the window is the last 24 whole hours, the current one included", () => {
  expect(complaintWindowStartMs(Date.UTC(2026, 10, 27, 21, 30))).toBe(Date.UTC(2026, 10, 26, 22, 0));
});
