// The Db adapters (src/store/db/sqlite-db.ts, pg-db.ts) on both engines: the same query
// gives the same rows, integers come back as numbers through toInt (PostgreSQL's BIGINT
// arrives as a string), a transaction commits all or nothing, a savepoint rolls back alone,
// inList matches 0/1/n items, collateC orders byte-wise, and each engine's guard holds:
// NUL never reaches PostgreSQL; a SQLite transaction that awaits anything but its own
// statements is rolled back. A Script (script.ts) runs the same in either engine's
// transactions.
import { afterAll, beforeAll, beforeEach, describe, expect } from "bun:test";
import type { Db } from "../../src/store/db/db.ts";
import { collateC, toFlag, toInt } from "../../src/store/db/dialect.ts";
import { pgTxDb } from "../../src/store/db/pg-db.ts";
import { all, run, runEach, runOn, runSync, type Script } from "../../src/store/db/script.ts";
import { inList, sql } from "../../src/store/db/sql.ts";
import { SqliteTxError } from "../../src/store/db/sqlite-db.ts";
import { PgValueError } from "../../src/store/pg-values.ts";
import { type EngineHandle, STORE_ENGINES, type StoreEngine } from "../helpers/engines.ts";

interface Row {
  id: string;
  n: unknown;
  flag: unknown;
}

const BIG_MS = 1_795_000_000_000;

describe.each(STORE_ENGINES)("Db on $name", (engine: StoreEngine) => {
  let handle: EngineHandle;
  let db: Db;
  beforeAll(async () => {
    if (!engine.available()) return;
    handle = await engine.open();
    db = handle.db;
    await db.run(sql`CREATE TABLE db_probe (id TEXT PRIMARY KEY, n BIGINT NOT NULL, flag INTEGER NOT NULL DEFAULT 0)`);
  });
  afterAll(async () => handle?.close());
  beforeEach(async () => {
    if (handle) await handle.clear(["db_probe"]);
  });

  const insert = (d: Db, id: string, n: number, flag = false) =>
    d.run(sql`INSERT INTO db_probe (id, n, flag) VALUES (${id}, ${n}, ${flag})`);
  const ids = async (d: Db = db) => (await d.all<Row>(sql`SELECT id FROM db_probe ORDER BY id${collateC}`)).map((r) => r.id);

  engine.test("run counts changes; get and all read rows; integers and flags come back alike", async () => {
    expect(await insert(db, "a", BIG_MS, true)).toEqual({ changes: 1 });
    await insert(db, "b", Number.MAX_SAFE_INTEGER);
    const a = await db.get<Row>(sql`SELECT * FROM db_probe WHERE id = ${"a"}`);
    expect(a && { id: a.id, n: toInt(a.n, "n"), flag: toFlag(a.flag, "flag") }).toEqual({ id: "a", n: BIG_MS, flag: true });
    expect(await db.get(sql`SELECT * FROM db_probe WHERE id = ${"zz"}`)).toBeNull();
    const all = await db.all<Row>(sql`SELECT * FROM db_probe ORDER BY id${collateC}`);
    expect(all.map((r) => toInt(r.n, "n"))).toEqual([BIG_MS, Number.MAX_SAFE_INTEGER]);
    expect(await db.run(sql`UPDATE db_probe SET n = n + 1`)).toEqual({ changes: 2 });
    expect(await db.run(sql`DELETE FROM db_probe WHERE id = ${"nobody"}`)).toEqual({ changes: 0 });
  });

  engine.test("RETURNING gives the rows written", async () => {
    const rows = await db.all<{ id: string }>(sql`INSERT INTO db_probe (id, n) VALUES (${"r"}, ${1}) RETURNING id`);
    expect(rows).toEqual([{ id: "r" }]);
    const upsert = sql`INSERT INTO db_probe (id, n) VALUES (${"r"}, ${2}) ON CONFLICT (id) DO UPDATE SET n = excluded.n RETURNING n`;
    expect(toInt((await db.get<{ n: unknown }>(upsert))?.n, "n")).toBe(2);
  });

  engine.test("inList with 0, 1 and n items; NOT IN of none is everything", async () => {
    for (const id of ["a", "b", "c"]) await insert(db, id, 1);
    const among = async (list: string[]) =>
      (await db.all<Row>(sql`SELECT id FROM db_probe WHERE ${inList("id", list)} ORDER BY id${collateC}`)).map((r) => r.id);
    expect(await among([])).toEqual([]);
    expect(await among(["b"])).toEqual(["b"]);
    expect(await among(["c", "a", "x"])).toEqual(["a", "c"]);
    const n = await db.all<Row>(sql`SELECT id FROM db_probe WHERE ${inList("n", [1, 2])}`);
    expect(n.length).toBe(3);
    expect((await db.all<Row>(sql`SELECT id FROM db_probe WHERE NOT (${inList("id", [])})`)).length).toBe(3);
  });

  engine.test("collateC orders byte-wise (upper case first), as SQLite does", async () => {
    for (const id of ["addr_a", "addr_B", "addr_C"]) await insert(db, id, 1);
    expect(await ids()).toEqual(["addr_B", "addr_C", "addr_a"]);
  });

  engine.test("a transaction commits every statement together", async () => {
    const value = await db.tx(async (tx) => {
      await insert(tx, "a", 1);
      await insert(tx, "b", 2);
      return "done";
    });
    expect(value).toBe("done");
    expect(await ids()).toEqual(["a", "b"]);
  });

  engine.test("a transaction whose body throws leaves nothing", async () => {
    const failing = db.tx(async (tx) => {
      await insert(tx, "a", 1);
      await insert(tx, "a", 2);
    });
    expect(failing).rejects.toThrow();
    await failing.catch(() => {});
    expect(await ids()).toEqual([]);
    // The Db is usable after it.
    await db.tx((tx) => insert(tx, "b", 1));
    expect(await ids()).toEqual(["b"]);
  });

  engine.test("a savepoint inside a transaction rolls back alone", async () => {
    await db.tx(async (tx) => {
      await insert(tx, "outer", 1);
      await tx
        .tx(async (sp) => {
          await insert(sp, "inner", 1);
          throw new Error("undo the inner");
        })
        .catch(() => {});
      await tx.tx((sp) => insert(sp, "kept", 1));
    });
    expect(await ids()).toEqual(["kept", "outer"]);
  });

  engine.test("transactions started together both commit", async () => {
    await Promise.all(["a", "b", "c"].map((id, i) => db.tx(async (tx) => insert(tx, id, i))));
    expect(await ids()).toEqual(["a", "b", "c"]);
  });

  /** A script: inserts, reads back what it wrote, and returns the count. */
  function* insertTwo(prefix: string): Script<number> {
    yield* run(sql`INSERT INTO db_probe (id, n) VALUES (${`${prefix}1`}, ${1})`);
    yield* run(sql`INSERT INTO db_probe (id, n) VALUES (${`${prefix}2`}, ${2})`);
    const rows = yield* all<Row>(sql`SELECT id FROM db_probe WHERE id LIKE ${`${prefix}%`}`);
    return rows.length;
  }

  engine.test("a script runs awaited in a transaction, and is undone with it", async () => {
    expect(await db.tx((tx) => runOn(tx, insertTwo("a")))).toBe(2);
    const failing = db.tx(async (tx) => {
      await runOn(tx, insertTwo("b"));
      throw new Error("undo");
    });
    expect(failing).rejects.toThrow("undo");
    await failing.catch(() => {});
    expect(await ids()).toEqual(["a1", "a2"]);
  });

  engine.test("a script runs in another repository's transaction (synchronous on SQLite, sql.begin's on PostgreSQL)", async () => {
    if (handle.kind === "sqlite") {
      const conn = handle.store.db;
      expect(conn.transaction(() => runSync(conn, insertTwo("s")))()).toBe(2);
      expect(() =>
        conn.transaction(() => {
          runSync(conn, insertTwo("t"));
          throw new Error("undo");
        })(),
      ).toThrow("undo");
    } else {
      expect(await handle.sql.begin((tx) => runOn(pgTxDb(tx), insertTwo("s")))).toBe(2);
      const failing = handle.sql.begin(async (tx) => {
        await runOn(pgTxDb(tx), insertTwo("t"));
        throw new Error("undo");
      });
      expect(failing).rejects.toThrow("undo");
      await failing.catch(() => {});
    }
    expect(await ids()).toEqual(["s1", "s2"]);
  });

  engine.test("statements run together (runEach) run in order, and one that fails undoes its transaction", async () => {
    // The UPDATE finds the row only if it runs after the INSERT before it.
    function* together(prefix: string, twice = false): Script<number[]> {
      const results = yield* runEach([
        sql`INSERT INTO db_probe (id, n) VALUES (${`${prefix}1`}, ${1})`,
        sql`UPDATE db_probe SET n = ${5} WHERE id = ${`${prefix}1`}`,
        sql`INSERT INTO db_probe (id, n) VALUES (${twice ? `${prefix}1` : `${prefix}2`}, ${2})`,
      ]);
      return results.map((r) => r.changes);
    }
    expect(await db.tx((tx) => runOn(tx, together("e")))).toEqual([1, 1, 1]);
    expect(toInt((await db.get<Row>(sql`SELECT n FROM db_probe WHERE id = 'e1'`))?.n, "n")).toBe(5);
    const failing = db.tx((tx) => runOn(tx, together("f", true)));
    expect(failing).rejects.toThrow();
    await failing.catch(() => {});
    if (handle.kind === "sqlite") {
      const conn = handle.store.db;
      expect(conn.transaction(() => runSync(conn, together("s")))()).toEqual([1, 1, 1]);
    }
    expect(await ids()).toEqual(handle.kind === "sqlite" ? ["e1", "e2", "s1", "s2"] : ["e1", "e2"]);
  });

  if (engine.name === "PostgreSQL") {
    engine.test("a value holding NUL is refused before PostgreSQL, naming it", async () => {
      expect(insert(db, "a\u0000b", 1)).rejects.toThrow(PgValueError);
      expect(db.tx((tx) => insert(tx, "x\u0000", 1))).rejects.toThrow("parameter 1 holds NUL");
      expect(await ids()).toEqual([]);
    });
  } else {
    engine.test("a transaction that awaits I/O or a timer is rolled back with an error saying so", async () => {
      const leaking = db.tx(async (tx) => {
        await insert(tx, "a", 1);
        await Bun.sleep(1);
        await insert(tx, "b", 1);
      });
      expect(leaking).rejects.toThrow(SqliteTxError);
      await leaking.catch(() => {});
      expect(await ids()).toEqual([]);
      await db.tx((tx) => insert(tx, "c", 1));
      expect(await ids()).toEqual(["c"]);
    });
  }
});
