import { describe, expect, test } from "bun:test";
import { parseSearchQuery, SearchQueryError, termTimeMs } from "../../src/lib/search-query.ts";

const FIELDS = ["status", "to", "from", "subject", "created_at", "tag"];

describe("parseSearchQuery", () => {
  test.each([
    ["", []],
    ["*", []],
    ["  ", []],
    ["invoice", [{ field: null, op: "=", value: "invoice" }]],
    [
      "status:404 invoice",
      [
        { field: "status", op: "=", value: "404" },
        { field: null, op: "=", value: "invoice" },
      ],
    ],
    [
      'subject:"monthly report" from:bob',
      [
        { field: "subject", op: "=", value: "monthly report" },
        { field: "from", op: "=", value: "bob" },
      ],
    ],
    ['"two words"', [{ field: null, op: "=", value: "two words" }]],
    ["created_at:>=2026-11-01", [{ field: "created_at", op: ">=", value: "2026-11-01" }]],
    ["created_at:<2026-11-02T10:00:00Z", [{ field: "created_at", op: "<", value: "2026-11-02T10:00:00Z" }]],
    ["TAG:welcome", [{ field: "tag", op: "=", value: "welcome" }]],
  ])("%p", (q, terms) => expect(parseSearchQuery(q, FIELDS)).toEqual(terms as never));

  test("an unknown field is an error naming the known ones", () => {
    expect(() => parseSearchQuery("colour:red", FIELDS)).toThrow(
      new SearchQueryError('unknown field "colour" (known: status, to, from, subject, created_at, tag)'),
    );
  });
  test("an unclosed quote is an error", () => {
    expect(() => parseSearchQuery('subject:"open', FIELDS)).toThrow(SearchQueryError);
  });
});

describe("parseSearchQuery with a cap on terms (http.search_max_terms)", () => {
  const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i}`).join(" ");
  test.each([
    // [query, cap, terms read or the error]
    [words(16), 16, 16],
    [words(1), 1, 1],
    [`${words(16)} * *`, 16, 16],
    ['subject:"a b" from:c d', 3, 3],
    [
      words(17),
      16,
      "at most 16 terms, not 17 (http.search_max_terms): search for fewer words, or narrow by a field (from:, to:, created_at:>=...)",
    ],
    [
      words(83),
      16,
      "at most 16 terms, not 83 (http.search_max_terms): search for fewer words, or narrow by a field (from:, to:, created_at:>=...)",
    ],
    [
      'subject:"a b" from:c d',
      2,
      "at most 2 terms, not 3 (http.search_max_terms): search for fewer words, or narrow by a field (from:, to:, created_at:>=...)",
    ],
  ])("%p with at most %p terms", (query, cap, expected) => {
    if (typeof expected === "number") expect(parseSearchQuery(query, FIELDS, cap)).toHaveLength(expected);
    else expect(() => parseSearchQuery(query, FIELDS, cap)).toThrow(new SearchQueryError(expected));
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
