// [[outbound.destinations]] (issue 29): a bad rule is a config error naming its key, as
// `postroom check-config` and `postroom serve` print it (both read the file with parseConfigText).
import { describe, expect, test } from "bun:test";
import { parseConfigText } from "../../src/config/load.ts";

const problemsOf = (toml: string): string[] => {
  const r = parseConfigText(toml);
  return r.ok ? [] : r.problems;
};
const rule = (lines: string) => `[outbound]\n[[outbound.destinations]]\nname = "gmail"\nmx = [".google.com"]\n${lines}`;

describe("[[outbound.destinations]] errors name the key", () => {
  test.each([
    ["a malformed rate", rule(`rate = "600/minute"`), 'outbound.destinations[0].rate: must be "N/s", "N/min", "N/h" or "off"'],
    ["an unknown key", rule(`max_conections = 5`), "outbound.destinations[0].max_conections: unknown key"],
    ["no mx", `[outbound]\n[[outbound.destinations]]\nname = "x"\nmx = []`, "outbound.destinations[0].mx"],
    [
      "a name unfit for a path",
      `[outbound]\n[[outbound.destinations]]\nname = "Gmail/EU"\nmx = [".google.com"]`,
      "outbound.destinations[0].name",
    ],
    ["an MX that is no host", rule(`mx = ["mx example.com"]`).replace('mx = [".google.com"]\n', ""), "outbound.destinations[0].mx[0]"],
    ["a pause over an hour", rule(`pause = "2h"`), 'outbound.destinations[0].pause: must be at most 1h, not "2h"'],
    ["max_connections 0", rule(`max_connections = 0`), "outbound.destinations[0].max_connections: must be an integer from 1 to 100"],
    [
      "a name used twice",
      `${rule("")}\n[[outbound.destinations]]\nname = "gmail"\nmx = ["mx.example.com"]`,
      "outbound.destinations[1].name: duplicates the name of outbound.destinations[0]",
    ],
  ])("%s", (_what, toml, expected) => {
    const problems = problemsOf(toml);
    expect(problems.some((p) => p.startsWith(expected))).toBe(true);
  });

  test("a good rule is read with its units", () => {
    const r = parseConfigText(rule(`max_connections = 10\nrate = "600/min"\nthrottle_replies = ["4.7.28"]\npause = "5m"`));
    if (!r.ok) throw new Error(r.problems.join("\n"));
    expect(r.config.outbound.destinations).toEqual([
      {
        name: "gmail",
        mx: [".google.com"],
        maxConnections: 10,
        rate: { limit: 600, windowMs: 60_000 },
        throttleReplies: ["4.7.28"],
        pauseMs: 300_000,
      },
    ]);
  });
});
