// The pure parts of a webhook endpoint's filter (webhook-endpoint.ts): one stored spelling
// per filter, a LIKE pattern that finds exactly one kind (its underscore is no wildcard),
// and which kinds a filter may name.
import { describe, expect, test } from "bun:test";
import { decodeFilter, encodeFilter, filterPattern, unknownKind } from "../../src/events/webhook-endpoint.ts";

describe("encodeFilter / decodeFilter", () => {
  test.each([
    [[], ""],
    [["delivery"], ",delivery,"],
    [["open", "bounce", "open"], ",bounce,open,"],
    [["soft_bounce", "bounce"], ",bounce,soft_bounce,"],
  ] as [string[], string][])("%j is stored as %j and reads back sorted, without repeats", (events, stored) => {
    expect(encodeFilter(events)).toBe(stored);
    expect(decodeFilter(stored)).toEqual([...new Set(events)].sort());
  });
});

describe("filterPattern", () => {
  /** LIKE with ESCAPE '!' as SQLite and PostgreSQL read it. */
  const like = (value: string, pattern: string) => {
    let re = "";
    for (let i = 0; i < pattern.length; i++) {
      const c = pattern[i]!;
      if (c === "!") re += pattern[++i]!.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
      else if (c === "%") re += ".*";
      else if (c === "_") re += ".";
      else re += c.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    }
    return new RegExp(`^${re}$`, "s").test(value);
  };
  test.each([
    ["soft_bounce", ",soft_bounce,", true],
    ["soft_bounce", ",softxbounce,", false],
    ["bounce", ",soft_bounce,", false],
    ["bounce", ",bounce,open,", true],
    ["open", ",bounce,open,", true],
    ["click", ",bounce,open,", false],
  ] as [string, string, boolean][])("%s in %j: %p", (kind, stored, found) => {
    expect(like(stored, filterPattern(kind))).toBe(found);
  });
});

describe("unknownKind", () => {
  test.each([
    [[], null],
    [["delivery", "auto_reply", "retries_exhausted"], null],
    [["delivery", "deliverd"], "deliverd"],
    [["spamd"], "spamd"],
    [["complaint"], "complaint"],
    [["Delivery"], "Delivery"],
  ] as [string[], string | null][])("%j → %p", (events, unknown) => {
    expect(unknownKind(events)).toBe(unknown);
  });
});
