// Grouped commits (src/store/group-commit.ts): writes close together share one
// transaction, each settles only after it, and one that fails is rolled back alone.
import { afterAll, describe, expect, jest, test } from "bun:test";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { GroupCommit } from "../../src/store/group-commit.ts";
import { tempDir } from "../helpers/tmp.ts";

describe("GroupCommit", () => {
  const dir = tempDir();
  const db = new Database(join(dir.path, "t.db"));
  db.exec("PRAGMA journal_mode = WAL");
  db.exec("CREATE TABLE t (x INTEGER PRIMARY KEY)");
  // Another connection to the same file sees only what is committed.
  const other = new Database(join(dir.path, "t.db"), { readonly: true });
  afterAll(() => {
    other.close();
    db.close();
    dir.remove();
  });
  const commits = new GroupCommit(db, 5);
  const insert = (x: number) => () => db.query("INSERT INTO t VALUES (?)").run(x).changes;
  const rows = () => (db.query("SELECT x FROM t ORDER BY x").all() as { x: number }[]).map((r) => r.x);
  const committed = () => (other.query("SELECT x FROM t ORDER BY x").all() as { x: number }[]).map((r) => r.x);

  test("writes within the window share one transaction; each settles only after its commit", async () => {
    // Bun's fake timers: the window's 5 ms pass when the test says, however busy the machine is.
    jest.useFakeTimers();
    try {
      // What was committed when each write ran, and when each caller heard back.
      const seenByWrite: number[][] = [];
      const seenAtSettle: number[][] = [];
      const write = (x: number) =>
        commits.run(() => (seenByWrite.push(committed()), insert(x)())).then((v) => (seenAtSettle.push(committed()), v));
      // Three writes 2 ms apart, the first opening the window.
      const all = [write(1)];
      for (const x of [2, 3]) {
        jest.advanceTimersByTime(2);
        await Promise.resolve();
        all.push(write(x));
      }
      // 4 ms on: nothing is committed, nobody has heard back.
      expect(committed()).toEqual([]);
      expect(seenAtSettle).toEqual([]);
      jest.advanceTimersByTime(1);
      expect(await Promise.all(all)).toEqual([1, 1, 1]);
      // One transaction: no write saw another's row committed (one commit each would show [], [1], [1, 2]).
      expect(seenByWrite).toEqual([[], [], []]);
      // Each caller heard back once all three were on disk.
      expect(seenAtSettle).toEqual([
        [1, 2, 3],
        [1, 2, 3],
        [1, 2, 3],
      ]);
    } finally {
      jest.useRealTimers();
    }
  });

  test("a write that fails is rolled back alone", async () => {
    const results = await Promise.allSettled([
      commits.run(insert(4)),
      commits.run(insert(1)),
      commits.run(() => (insert(5)(), insert(5)())),
      commits.run(insert(6)),
    ]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "rejected", "fulfilled"]);
    // The failing write's own first insert (5) is gone with it.
    expect(rows()).toEqual([1, 2, 3, 4, 6]);
  });

  test("with no window, the writes of one event-loop turn share a commit made at its end", async () => {
    const perTurn = new GroupCommit(db, 0);
    const first = [7, 8].map((x) => perTurn.run(insert(x)));
    expect(rows()).not.toContain(7);
    await new Promise((r) => setImmediate(r));
    expect(rows()).toEqual([1, 2, 3, 4, 6, 7, 8]);
    expect(await Promise.all(first)).toEqual([1, 1]);
  });

  test("a write alone in its batch that fails leaves nothing, and the next batch commits", async () => {
    const single = new GroupCommit(db, 0);
    await expect(single.run(() => (insert(20)(), insert(20)()))).rejects.toThrow();
    expect(db.inTransaction).toBe(false);
    expect(rows()).not.toContain(20);
    expect(await single.run(insert(21))).toBe(1);
    expect(rows()).toContain(21);
    db.query("DELETE FROM t WHERE x = 21").run();
  });

  test("a flush inside an open transaction commits with it, and a failing write is still undone alone", async () => {
    const inner = new GroupCommit(db, 1000);
    const results = Promise.allSettled([inner.run(insert(9)), inner.run(() => (insert(10)(), insert(9)()))]);
    db.transaction(() => inner.flush())();
    expect((await results).map((r) => r.status)).toEqual(["fulfilled", "rejected"]);
    expect(rows()).toEqual([1, 2, 3, 4, 6, 7, 8, 9]);
  });

  test("a failed commit rejects every write of the batch; flush commits at once", async () => {
    const closed = new Database(":memory:");
    closed.exec("CREATE TABLE t (x INTEGER PRIMARY KEY)");
    const c = new GroupCommit(closed, 1000);
    const pending = Promise.allSettled([c.run(() => 1), c.run(() => 2)]);
    closed.close();
    c.flush();
    expect((await pending).map((r) => r.status)).toEqual(["rejected", "rejected"]);
  });
});
