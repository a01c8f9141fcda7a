// A full disk is recognised from the errors the system really gives (SQLite past its size
// limit, a write to /dev/full), and reported at most once an interval.
import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { DiskFullLog, isDiskFull } from "../../src/lib/disk-full.ts";
import { createLogger } from "../../src/lib/logger.ts";

const thrown = (fn: () => unknown): unknown => {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error("did not throw");
};

describe("isDiskFull", () => {
  test("SQLite answering SQLITE_FULL (a database at its max_page_count)", () => {
    const db = new Database(":memory:");
    db.exec("CREATE TABLE t (x TEXT)");
    db.exec("PRAGMA max_page_count = 2");
    const err = thrown(() => {
      for (let i = 0; i < 100; i++) db.query("INSERT INTO t VALUES (?)").run("x".repeat(1000));
    });
    expect((err as { code?: string }).code).toBe("SQLITE_FULL");
    expect(isDiskFull(err)).toBe(true);
  });

  test("a write to /dev/full (ENOSPC), also wrapped as another error's cause", () => {
    const err = thrown(() => writeFileSync("/dev/full", "x"));
    expect((err as { code?: string }).code).toBe("ENOSPC");
    expect(isDiskFull(err)).toBe(true);
    expect(isDiskFull(new Error("could not save", { cause: err }))).toBe(true);
  });

  test.each([
    ["a quota exceeded (EDQUOT)", true, Object.assign(new Error("quota"), { code: "EDQUOT" })],
    ["a unique constraint", false, Object.assign(new Error("UNIQUE"), { code: "SQLITE_CONSTRAINT_UNIQUE" })],
    ["a permission refused", false, Object.assign(new Error("denied"), { code: "EACCES" })],
    ["a plain error", false, new Error("boom")],
    ["the string ENOSPC", false, "ENOSPC"],
    ["null", false, null],
  ])("%s: %p", (_name, full, err) => expect(isDiskFull(err)).toBe(full));
});

describe("DiskFullLog", () => {
  test("one line per interval, with the number of failed writes since the last one", () => {
    const lines: any[] = [];
    let now = 0;
    const log = new DiskFullLog(createLogger({ sink: (l) => lines.push(JSON.parse(l)) }), () => now, 60_000);
    const full = Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" });
    for (let i = 0; i < 600; i++, now += 100) log.report("incoming statuses", full); // ten a second for a minute
    log.report("api", full);
    expect(lines.map((l) => [l.level, l.msg, l.where, l.code, l.failed_writes])).toEqual([
      ["error", "disk full", "incoming statuses", "SQLITE_FULL", 1],
      ["error", "disk full", "api", "SQLITE_FULL", 600],
    ]);
  });
});
