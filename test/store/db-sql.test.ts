// The query builder (src/store/db/sql.ts): what text and parameters a query renders to on
// each engine. Values are always bound, never put into the text; pieces keep their own
// values in order; inList expands to one placeholder per item (and an empty list is false
// on both engines); identifiers pass only as checked names.
import { describe, expect, test } from "bun:test";
import { collateC, forUpdate } from "../../src/store/db/dialect.ts";
import { empty, id, inList, join, render, type Sql, sql, SqlBuildError } from "../../src/store/db/sql.ts";

const textAndParams = (query: Sql, style: "sqlite" | "postgres") => {
  const { text, params } = render(query, style);
  return { text, params: params as unknown[] };
};

const cases: { name: string; query: () => Sql; sqlite: string; postgres: string; params: unknown[] }[] = [
  { name: "no values", query: () => sql`SELECT 1`, sqlite: "SELECT 1", postgres: "SELECT 1", params: [] },
  {
    name: "values are placeholders, in order",
    query: () => sql`SELECT * FROM t WHERE a = ${"x"} AND b > ${5}`,
    sqlite: "SELECT * FROM t WHERE a = ? AND b > ?",
    postgres: "SELECT * FROM t WHERE a = $1 AND b > $2",
    params: ["x", 5],
  },
  {
    name: "text that looks like SQL is a value",
    query: () => sql`SELECT * FROM t WHERE a = ${"'; DROP TABLE t; --"}`,
    sqlite: "SELECT * FROM t WHERE a = ?",
    postgres: "SELECT * FROM t WHERE a = $1",
    params: ["'; DROP TABLE t; --"],
  },
  {
    name: "booleans bind as 1/0, null as NULL",
    query: () => sql`INSERT INTO t VALUES (${true}, ${false}, ${null})`,
    sqlite: "INSERT INTO t VALUES (?, ?, ?)",
    postgres: "INSERT INTO t VALUES ($1, $2, $3)",
    params: [1, 0, null],
  },
  {
    name: "a piece is inlined, its values numbered after those before it",
    query: () => sql`SELECT * FROM t WHERE a = ${1} ${sql`AND b = ${2} AND c = ${3}`} AND d = ${4}`,
    sqlite: "SELECT * FROM t WHERE a = ? AND b = ? AND c = ? AND d = ?",
    postgres: "SELECT * FROM t WHERE a = $1 AND b = $2 AND c = $3 AND d = $4",
    params: [1, 2, 3, 4],
  },
  {
    name: "pieces nest",
    query: () => sql`SELECT ${sql`a ${sql`+ ${1}`}`} FROM t WHERE b = ${2}`,
    sqlite: "SELECT a + ? FROM t WHERE b = ?",
    postgres: "SELECT a + $1 FROM t WHERE b = $2",
    params: [1, 2],
  },
  {
    name: "the empty piece leaves nothing",
    query: () => sql`SELECT * FROM t WHERE a = ${1} ${empty}`,
    sqlite: "SELECT * FROM t WHERE a = ? ",
    postgres: "SELECT * FROM t WHERE a = $1 ",
    params: [1],
  },
  {
    name: "inList of no item matches nothing",
    query: () => sql`SELECT * FROM t WHERE ${inList("a", [])}`,
    sqlite: "SELECT * FROM t WHERE (1 = 0)",
    postgres: "SELECT * FROM t WHERE (1 = 0)",
    params: [],
  },
  {
    name: "inList of one item",
    query: () => sql`SELECT * FROM t WHERE ${inList("a", ["x"])} AND b = ${7}`,
    sqlite: "SELECT * FROM t WHERE a IN (?) AND b = ?",
    postgres: "SELECT * FROM t WHERE a IN ($1) AND b = $2",
    params: ["x", 7],
  },
  {
    name: "inList of three items",
    query: () => sql`SELECT * FROM t WHERE b = ${0} AND ${inList("t.a", ["x", "y", "z"])}`,
    sqlite: "SELECT * FROM t WHERE b = ? AND t.a IN (?, ?, ?)",
    postgres: "SELECT * FROM t WHERE b = $1 AND t.a IN ($2, $3, $4)",
    params: [0, "x", "y", "z"],
  },
  {
    name: "an identifier from the code goes into the text",
    query: () => sql`SELECT ${id("created_at")} FROM ${id("t")} WHERE ${id("t.id")} = ${1}`,
    sqlite: "SELECT created_at FROM t WHERE t.id = ?",
    postgres: "SELECT created_at FROM t WHERE t.id = $1",
    params: [1],
  },
  {
    name: "join",
    query: () => sql`SELECT * FROM t WHERE ${join([sql`a = ${1}`, sql`b = ${2}`], " AND ")}`,
    sqlite: "SELECT * FROM t WHERE a = ? AND b = ?",
    postgres: "SELECT * FROM t WHERE a = $1 AND b = $2",
    params: [1, 2],
  },
  {
    name: "engine pieces render per engine",
    query: () => sql`SELECT * FROM t WHERE id${collateC} < ${"b"} ${forUpdate}`,
    sqlite: "SELECT * FROM t WHERE id < ? ",
    postgres: 'SELECT * FROM t WHERE id COLLATE "C" < $1 FOR UPDATE',
    params: ["b"],
  },
];

describe("render", () => {
  test("joins of as many pieces by the same separator are one shape: a driver keeps one statement for them", () => {
    const rows = (n: number) => join([sql`(${n}, ${"a"})`, sql`(${n + 1}, ${"b"})`], ", ");
    const insert = (n: number) => render(sql`INSERT INTO t (x, y) VALUES ${rows(n)}`, "sqlite");
    const first = insert(1);
    const again = insert(5);
    expect(again.key).toBe(first.key);
    expect(again.text).toBe("INSERT INTO t (x, y) VALUES (?, ?), (?, ?)");
    expect(again.params).toEqual([5, "a", 6, "b"]);
    // Another count or separator is another shape.
    expect(render(sql`INSERT INTO t (x, y) VALUES ${join([sql`(${1}, ${"a"})`], ", ")}`, "sqlite").key).not.toBe(first.key);
  });
  for (const c of cases) {
    test(c.name, () => {
      // Twice: the second rendering of a call site comes from the cache and must be the same.
      for (let i = 0; i < 2; i++) {
        expect(textAndParams(c.query(), "sqlite")).toEqual({ text: c.sqlite, params: c.params });
        expect(textAndParams(c.query(), "postgres")).toEqual({ text: c.postgres, params: c.params });
      }
    });
  }

  test("one call site with pieces that change from call to call renders each call as it is (the text cache keeps shapes apart)", () => {
    const query = (filter: boolean, list: string[]) =>
      sql`SELECT * FROM t WHERE a = ${1} ${filter ? sql`AND b = ${2}` : empty} AND ${inList("c", list)}`;
    const seen = [
      [false, []],
      [true, ["x"]],
      [false, ["x", "y"]],
      [true, []],
      [true, ["x", "y"]],
    ] as const;
    const texts = seen.map(([filter, list]) => textAndParams(query(filter, [...list]), "postgres"));
    expect(texts).toEqual([
      { text: "SELECT * FROM t WHERE a = $1  AND (1 = 0)", params: [1] },
      { text: "SELECT * FROM t WHERE a = $1 AND b = $2 AND c IN ($3)", params: [1, 2, "x"] },
      { text: "SELECT * FROM t WHERE a = $1  AND c IN ($2, $3)", params: [1, "x", "y"] },
      { text: "SELECT * FROM t WHERE a = $1 AND b = $2 AND (1 = 0)", params: [1, 2] },
      { text: "SELECT * FROM t WHERE a = $1 AND b = $2 AND c IN ($3, $4)", params: [1, 2, "x", "y"] },
    ]);
    // Pieces without values, changing from call to call at one site.
    const locked = (lock: boolean) => sql`SELECT * FROM t WHERE id${lock ? collateC : empty} = ${"a"} ${lock ? forUpdate : empty}`;
    for (const lock of [true, false, false, true]) {
      expect(textAndParams(locked(lock), "postgres")).toEqual({
        text: lock ? 'SELECT * FROM t WHERE id COLLATE "C" = $1 FOR UPDATE' : "SELECT * FROM t WHERE id = $1 ",
        params: ["a"],
      });
    }
    // Again, from the cache, in another order.
    expect(textAndParams(query(false, []), "postgres")).toEqual(texts[0]!);
    expect(textAndParams(query(true, ["z"]), "postgres")).toEqual({ ...texts[1]!, params: [1, 2, "z"] });
  });
});

describe("refused", () => {
  const refusedNames = ["", "Users", "t; DROP TABLE t", "a b", "a.b.c", '"t"', "t--", "1t"];
  for (const name of refusedNames) {
    test(`identifier ${JSON.stringify(name)}`, () => {
      expect(() => id(name)).toThrow(SqlBuildError);
    });
  }
  test("an identifier that is not a string", () => {
    expect(() => id(42 as unknown as string)).toThrow(SqlBuildError);
  });
  test("inList's column is an identifier", () => {
    expect(() => inList("a) OR (1 = 1", ["x"])).toThrow(SqlBuildError);
  });
  const refusedValues: [string, unknown][] = [
    ["undefined", undefined],
    ["an object", { a: 1 }],
    ["an array", ["a"]],
    ["NaN", Number.NaN],
    ["Infinity", Number.POSITIVE_INFINITY],
    ["a function", () => 1],
  ];
  for (const [name, value] of refusedValues) {
    test(`value: ${name}`, () => {
      expect(() => render(sql`SELECT ${value}`, "sqlite")).toThrow(SqlBuildError);
      expect(() => render(sql`SELECT ${sql`${value}`}`, "postgres")).toThrow(SqlBuildError);
    });
  }
  test("bytes and bigints are bound as they are", () => {
    const bytes = new Uint8Array([0, 1, 2]);
    expect(render(sql`SELECT ${bytes}, ${2n ** 60n}`, "postgres").params).toEqual([bytes, 2n ** 60n]);
  });
});
