// What a PostgreSQL repository makes of the values Bun's SQL client returns: a BIGINT
// (a string, or a bigint with `bigint: true`) becomes the number SQLite would have given,
// and a value a number cannot hold exactly is refused, never rounded.
import { describe, expect, test } from "bun:test";
import { pgFlag, pgInteger, PgValueError } from "../../src/store/pg-values.ts";

describe("pgInteger", () => {
  test.each([
    ["1795000000000", 1_795_000_000_000],
    [1_795_000_000_000n, 1_795_000_000_000],
    [42, 42],
    ["0", 0],
    ["-5", -5],
    [String(Number.MAX_SAFE_INTEGER), Number.MAX_SAFE_INTEGER],
  ] as const)("%p -> %p", (value, expected) => {
    expect(pgInteger(value, "t.c")).toBe(expected);
  });

  test.each([["9007199254740993"], [9_007_199_254_740_993n], ["1.5"], ["abc"], [""], [" "], [null], [undefined], [1.5]] as const)(
    "%p is refused, naming the column",
    (value) => {
      expect(() => pgInteger(value, "t.c")).toThrow(PgValueError);
      expect(() => pgInteger(value, "t.c")).toThrow(/^t\.c: /);
    },
  );
});

describe("pgFlag", () => {
  test.each([
    [1, true],
    [0, false],
    ["1", true],
    ["0", false],
  ] as const)("%p -> %p", (value, expected) => {
    expect(pgFlag(value, "t.admin")).toBe(expected);
  });
});
