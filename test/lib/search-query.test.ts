import { describe, expect, test } from "bun:test";
import { parseSearchQuery, SearchQueryError, termTimeMs } from "../../src/lib/search-query.ts";

const FIELDS = ["status", "to", "from", "subject", "created_at", "tag"];

describe("parseSearchQuery", () => {
  test.each([
    ["", []],
    ["*", []],
    ["  ", []],
    ["invoice", [{ field: null, op: "=", value: "invoice" }]],
    ["status:404 invoice", [{ field: "status", op: "=", value: "404" }, { field: null, op: "=", value: "invoice" }]],
    ['subject:"monthly report" from:bob', [{ field: "subject", op: "=", value: "monthly report" }, { field: "from", op: "=", value: "bob" }]],
    ['"two words"', [{ field: null, op: "=", value: "two words" }]],
    ["created_at:>=2026-11-01", [{ field: "created_at", op: ">=", value: "2026-11-01" }]],
    ["created_at:<2026-11-02T10:00:00Z", [{ field: "created_at", op: "<", value: "2026-11-02T10:00:00Z" }]],
    ["TAG:welcome", [{ field: "tag", op: "=", value: "welcome" }]],
  ])("%p", (q, terms) => expect(parseSearchQuery(q, FIELDS)).toEqual(terms as never));

  test("an unknown field is an error naming the known ones", () => {
    expect(() => parseSearchQuery("colour:red", FIELDS)).toThrow(new SearchQueryError('unknown field "colour" (known: status, to, from, subject, created_at, tag)'));
  });
  test("an unclosed quote is an error", () => {
    expect(() => parseSearchQuery('subject:"open', FIELDS)).toThrow(SearchQueryError);
  });
});

describe("termTimeMs", () => {
  test.each([
    ["2026-11-01", Date.parse("2026-11-01T00:00:00Z")],
    ["2026-11-01T10:00:00Z", Date.parse("2026-11-01T10:00:00Z")],
    ["yesterday", null],
    ["2026-13-45", null],
  ])("%p", (v, ms) => expect(termTimeMs(v)).toBe(ms));
});
