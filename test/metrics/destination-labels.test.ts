// /metrics' destination labels stay bounded: the first values seen keep their own label,
// later ones count as "other".
import { describe, expect, test } from "bun:test";
import { boundedLabel } from "../../src/metrics/metrics-destinations.ts";

describe("boundedLabel", () => {
  test("keeps the first `max` values, then answers other; a value seen before keeps its label", () => {
    const seen = new Set<string>();
    expect(["google", "mx a.test", "google", "yahoo", "mx b.test"].map((v) => boundedLabel(seen, v, 3))).toEqual([
      "google",
      "mx a.test",
      "google",
      "yahoo",
      "other",
    ]);
    expect(boundedLabel(seen, "mx a.test", 3)).toBe("mx a.test");
    expect(seen.size).toBe(3);
  });
});
