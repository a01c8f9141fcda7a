// How one claim's recipients are split over connections: table tests of planChunks.
import { describe, expect, test } from "bun:test";
import { planChunks, RECIPIENTS_PER_CONNECTION, RECIPIENTS_PER_NEW_CONNECTION } from "../../src/outbound/delivery/chunk-plan.ts";

const items = (domain: string, n: number) => Array.from({ length: n }, (_, i) => `${domain}#${i}`);
const domainOf = (item: string) => item.split("#")[0]!;
/** The plan as [domain, chunk sizes] and the number left unstarted. */
function plan(list: string[], free: number, room: Record<string, number>) {
  const p = planChunks(list, domainOf, free, (d) => room[d] ?? 0);
  const sizes = new Map<string, number[]>();
  for (const c of p.chunks) sizes.set(c.domain, [...(sizes.get(c.domain) ?? []), c.items.length]);
  return { chunks: [...sizes], unstarted: p.unstarted.length };
}

describe("planChunks", () => {
  test("one connection carries up to 50; one is opened per 10 waiting", () =>
    expect([RECIPIENTS_PER_CONNECTION, RECIPIENTS_PER_NEW_CONNECTION]).toEqual([50, 10]));
  const cases: [string, string[], number, Record<string, number>, ReturnType<typeof plan>][] = [
    ["few recipients: one connection", items("a", 3), 10, { a: 5 }, { chunks: [["a", [3]]], unstarted: 0 }],
    ["10 recipients share one connection", items("a", 10), 10, { a: 5 }, { chunks: [["a", [10]]], unstarted: 0 }],
    ["25 recipients: a connection per 10, evenly", items("a", 25), 10, { a: 5 }, { chunks: [["a", [9, 9, 7]]], unstarted: 0 }],
    [
      "120 recipients within a window of 5: five connections, evenly",
      items("a", 120),
      10,
      { a: 5 },
      { chunks: [["a", [24, 24, 24, 24, 24]]], unstarted: 0 },
    ],
    [
      "the domain's room caps its connections, 50 each; the rest wait",
      items("a", 120),
      10,
      { a: 2 },
      { chunks: [["a", [50, 50]]], unstarted: 20 },
    ],
    [
      "a full window's one free connection: 50 go, 238 wait (not 288 over one connection)",
      items("a", 288),
      20,
      { a: 1 },
      { chunks: [["a", [50]]], unstarted: 238 },
    ],
    ["room for all at under 50 each: split evenly", items("a", 90), 10, { a: 2 }, { chunks: [["a", [45, 45]]], unstarted: 0 }],
    ["the free connections in all cap a domain too", items("a", 100), 3, { a: 20 }, { chunks: [["a", [34, 34, 32]]], unstarted: 0 }],
    ["no room for the domain: all wait", items("a", 10), 10, { a: 0 }, { chunks: [], unstarted: 10 }],
    [
      "free connections run out: the later domain waits",
      [...items("a", 100), ...items("b", 5)],
      2,
      { a: 5, b: 5 },
      { chunks: [["a", [50, 50]]], unstarted: 5 },
    ],
    [
      "a domain without room leaves the slots to the next",
      [...items("a", 5), ...items("b", 5)],
      1,
      { a: 0, b: 3 },
      { chunks: [["b", [5]]], unstarted: 5 },
    ],
    [
      "domains in the order of their first recipient",
      ["b#0", "a#0", "b#1"],
      5,
      { a: 1, b: 1 },
      {
        chunks: [
          ["b", [2]],
          ["a", [1]],
        ],
        unstarted: 0,
      },
    ],
  ];
  for (const [name, list, free, room, want] of cases) test(name, () => expect(plan(list, free, room)).toEqual(want));
});

describe("planChunks with domains that share a destination (a smarthost)", () => {
  const viaRelay = (list: string[], free: number, relayRoom: number) => {
    const p = planChunks(
      list,
      domainOf,
      free,
      (dest) => (dest === "relay" ? relayRoom : 99),
      () => "relay",
    );
    const sizes = new Map<string, number[]>();
    for (const c of p.chunks) sizes.set(c.domain, [...(sizes.get(c.domain) ?? []), c.items.length]);
    return { chunks: [...sizes], unstarted: p.unstarted.length };
  };
  const cases: [string, string[], number, number, ReturnType<typeof viaRelay>][] = [
    [
      "20 domains of 5 and a relay window of 5: five connections in all, the rest wait",
      ["a", "b", "c", "d", "e", "f", "g"].flatMap((d) => items(d, 5)),
      100,
      5,
      {
        chunks: [
          ["a", [5]],
          ["b", [5]],
          ["c", [5]],
          ["d", [5]],
          ["e", [5]],
        ],
        unstarted: 10,
      },
    ],
    [
      "a domain takes several of the relay's connections; the next gets what is left",
      [...items("a", 30), ...items("b", 30)],
      100,
      4,
      {
        chunks: [
          ["a", [10, 10, 10]],
          ["b", [30]],
        ],
        unstarted: 0,
      },
    ],
    ["a full relay: nothing starts", [...items("a", 3), ...items("b", 3)], 100, 0, { chunks: [], unstarted: 6 }],
  ];
  for (const [name, list, free, relayRoom, want] of cases) test(name, () => expect(viaRelay(list, free, relayRoom)).toEqual(want));
});
