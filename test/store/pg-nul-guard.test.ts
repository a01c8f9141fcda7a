// The guard in front of PostgreSQL (src/store/pg-nul-guard.ts): a NUL that some field let
// through fails before the database, naming the value, instead of PostgreSQL's "invalid byte
// sequence for encoding UTF8: 0x00" (and instead of being stored silently on SQLite).
import { afterAll, beforeAll, describe, expect } from "bun:test";
import { STORE_ENGINES, type EngineHandle } from "../helpers/engines.ts";
import { PgValueError } from "../../src/store/pg-values.ts";

const pg = STORE_ENGINES.find((e) => e.name === "PostgreSQL")!;

describe("PostgreSQL: no NUL passes the guard", () => {
  let h: EngineHandle;
  beforeAll(async () => {
    if (!pg.available()) return;
    h = await pg.open();
    await h.sql!`CREATE TABLE nul_guard_test (id TEXT PRIMARY KEY, subject TEXT, bytes BYTEA)`;
  });
  afterAll(async () => {
    await h?.close();
  });

  const refused = async (run: () => Promise<unknown>, where: string) => {
    // A tagged template throws as it is called, before any promise.
    const err = await Promise.resolve()
      .then(run)
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(PgValueError);
    expect((err as Error).message).toBe(
      `${where} holds NUL (U+0000), which PostgreSQL text cannot store: refuse or replace it before the store (src/lib/stored-text.ts)`,
    );
  };

  pg.test("a value of a tagged template, a helper's rows, a transaction's query, unsafe's parameters", async () => {
    const sql = h.sql!;
    await refused(() => sql`SELECT ${"ok"}, ${"a\u0000b"}`, "query value 2");
    await refused(
      async () =>
        sql`INSERT INTO nul_guard_test ${sql([
          { id: "1", subject: "ok" },
          { id: "2", subject: "s\u0000" },
        ])}`,
      "helper value 1[1].subject",
    );
    await refused(() => sql.begin(async (tx) => tx`UPDATE nul_guard_test SET subject = ${"\u0000"}`), "query value 1");
    await refused(() => sql.unsafe("SELECT $1", ["x\u0000"]), "parameter 1");
    await refused(() => sql`SELECT 1 WHERE 'a' = ANY(${["a", "b\u0000"]})`, "query value 1[1]");
    expect(await sql`SELECT count(*)::int AS n FROM nul_guard_test`).toEqual([{ n: 0 }]);
  });

  pg.test("clean text and bytes holding zero bytes pass, on the pool and in a transaction", async () => {
    const sql = h.sql!;
    await sql`INSERT INTO nul_guard_test ${sql({ id: "1", subject: "Grüße \uFFFD", bytes: Buffer.from([0, 1, 0]) })}`;
    await sql.begin(async (tx) => tx`UPDATE nul_guard_test SET subject = ${"again"} WHERE id = ${"1"}`);
    const [row] = await sql.unsafe("SELECT subject, bytes FROM nul_guard_test WHERE id = $1", ["1"]);
    expect(row.subject).toBe("again");
    expect([...row.bytes]).toEqual([0, 1, 0]);
  });
});
