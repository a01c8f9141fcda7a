// Scripts (src/store/db/script.ts) on a Db: runEach hands every statement to the Db before
// waiting for any answer, which is what lets PostgreSQL's client send them in one write
// and the server answer them in one round trip (pg-db.ts sends a statement when run() is
// called). A Db that answers only once it holds all three proves it; one statement at a
// time would wait forever for the second.
import { describe, expect, test } from "bun:test";
import type { Db, RunResult } from "../../src/store/db/db.ts";
import { run, runEach, runOn, type Script } from "../../src/store/db/script.ts";
import { render, sql } from "../../src/store/db/sql.ts";

/** A Db whose run() answers only once `expected` statements have been handed to it. */
function answeringOnceAll(expected: number) {
  const texts: string[] = [];
  const waiting: ((r: RunResult) => void)[] = [];
  const db = {
    engine: "postgres",
    run: (query) => {
      texts.push(render(query, "postgres").text);
      const answer = new Promise<RunResult>((resolve) => waiting.push(resolve));
      if (waiting.length === expected) for (const [i, resolve] of waiting.entries()) resolve({ changes: i + 1 });
      return answer;
    },
  } as Db;
  return { db, texts };
}

const statements = [sql`INSERT INTO a VALUES (1)`, sql`UPDATE a SET x = 2`, sql`DELETE FROM b`];

describe("runEach", () => {
  test("hands every statement over, in order, before waiting for an answer", async () => {
    const { db, texts } = answeringOnceAll(3);
    function* script(): Script<number[]> {
      return (yield* runEach(statements)).map((r) => r.changes);
    }
    const answered = await Promise.race([runOn(db, script()), Bun.sleep(2000).then(() => "waited")]);
    expect(answered).toEqual([1, 2, 3]);
    expect(texts).toEqual(["INSERT INTO a VALUES (1)", "UPDATE a SET x = 2", "DELETE FROM b"]);
  });

  test("statement after statement, the same Db would wait for the second forever (the control)", async () => {
    const { db, texts } = answeringOnceAll(3);
    function* script(): Script<void> {
      for (const s of statements) yield* run(s);
    }
    const answered = await Promise.race([runOn(db, script()), Bun.sleep(200).then(() => "waited")]);
    expect(answered).toBe("waited");
    expect(texts).toHaveLength(1);
  });

  test("no statements: no step at all", async () => {
    const { db, texts } = answeringOnceAll(1);
    function* script(): Script<number> {
      return (yield* runEach([])).length;
    }
    expect(await runOn(db, script())).toBe(0);
    expect(texts).toEqual([]);
  });
});
