// The per-destination window (slow start as Postfix's queue manager does it): table tests.
import { describe, expect, test } from "bun:test";
import { destinationOf, initialWindow, nextWindow, type ConnectionFeedback } from "../../src/outbound/delivery/destination-window.ts";

const LIMITS = { initial: 5, max: 20 };

/** The window after a sequence of feedback, from the initial one. */
function after(feedback: ConnectionFeedback[], limits = LIMITS): number {
  return feedback.reduce((w, f) => nextWindow(w, f, limits), initialWindow(limits)).connections;
}
const times = (n: number, f: ConnectionFeedback): ConnectionFeedback[] => Array.from({ length: n }, () => f);

describe("whose window a domain counts against", () => {
  test.each([
    ["example.org", null, "example.org"],
    ["example.org", "smtp://relay.test:587", "relay smtp://relay.test:587"],
    ["other.test", "smtp://relay.test:587", "relay smtp://relay.test:587"],
  ])("%s with smarthost %s: %s", (domain, smarthost, want) => expect(destinationOf(domain, smarthost)).toBe(want));
});

describe("destination window", () => {
  const cases: [string, ConnectionFeedback[], number][] = [
    ["a new destination gets the initial concurrency", [], 5],
    ["one good connection is not yet one more", times(1, "carried"), 5],
    ["a window's worth of good connections adds one", times(5, "carried"), 6],
    ["then six more add the next", times(11, "carried"), 7],
    ["a long run of good connections reaches the limit and stays", times(500, "carried"), 20],
    ["a window's worth of failures takes one away", times(5, "failed"), 4],
    ["failures never close the destination: at least one connection", times(200, "failed"), 1],
    ["a failure in a good run slows the growth", [...times(5, "carried"), "failed", ...times(5, "carried")], 6],
  ];
  for (const [name, feedback, connections] of cases) test(name, () => expect(after(feedback)).toBe(connections));

  test("the initial concurrency is capped by the limit", () => {
    expect(initialWindow({ initial: 5, max: 2 })).toEqual({ connections: 2, credit: 0 });
    expect(after(times(50, "carried"), { initial: 5, max: 2 })).toBe(2);
  });

  test("a limit lowered by a reload applies at the next feedback", () => {
    const wide = after(times(200, "carried"));
    expect(nextWindow({ connections: wide, credit: 0 }, "carried", { initial: 5, max: 8 }).connections).toBe(8);
  });

  test("from one connection, recovery is one per good connection", () => {
    const limits = { initial: 1, max: 20 };
    expect(after(times(1, "carried"), limits)).toBe(2);
    expect(after(times(3, "carried"), limits)).toBe(3);
  });
});
