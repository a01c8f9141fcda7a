// No NUL in path segments and query parameters (src/http/parameter-checks.ts).
import { describe, expect, test } from "bun:test";
import { parameterTextProblem } from "../../src/http/parameter-checks.ts";

describe("parameterTextProblem", () => {
  test.each([
    ["clean parameters", { addressId: "abc" }, { query: "subject:invoice", page: "2" }, null],
    ["none at all", undefined, undefined, null],
    ["NUL in a path segment", { accountId: "a", addressId: "a\u0000b" }, {}, "path addressId: must not contain NUL (\\u0000)"],
    ["NUL in a query parameter", {}, { address_id: "x", query: "a\u0000b" }, "query query: must not contain NUL (\\u0000)"],
    ["a parameter given twice, the second holding NUL", {}, { query: ["ok", "a\u0000"] }, "query query: must not contain NUL (\\u0000)"],
    ["a parameter name holding NUL is not shown", {}, { "q\u0000": "x" }, "query parameter names must not contain NUL (\\u0000)"],
    [
      "other control characters are the route's to judge (an attachment's file name may hold them)",
      { name: "a\u0001b.txt" },
      { query: "a\tb\u001b" },
      null,
    ],
  ])("%s", (_, params, query, expected) => {
    expect(parameterTextProblem(params as never, query as never)).toBe(expected as never);
  });
});
