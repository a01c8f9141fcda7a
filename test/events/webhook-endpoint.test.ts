// The pure parts of a webhook endpoint's filter (webhook-endpoint.ts): one stored spelling
// per filter, which kinds a stored filter takes (bounce is not soft_bounce), and which kinds
// a filter may name.
import { describe, expect, test } from "bun:test";
import { decodeFilter, encodeFilter, filterTakes, unknownKind } from "../../src/events/webhook-endpoint.ts";

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

describe("filterTakes", () => {
  test.each([
    ["soft_bounce", ",soft_bounce,", true],
    ["bounce", ",soft_bounce,", false],
    ["bounce", ",bounce,open,", true],
    ["open", ",bounce,open,", true],
    ["click", ",bounce,open,", false],
    ["click", "", true],
  ] as [string, string, boolean][])("%s in %j: %p", (kind, stored, taken) => {
    expect(filterTakes(stored, kind)).toBe(taken);
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
