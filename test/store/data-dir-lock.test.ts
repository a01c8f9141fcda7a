// One Postroom per data_dir: the lock names its owner, refuses a second taker while the
// owner runs, and is taken over from a process that is gone or whose PID was reused.
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { LOCK_FILE, lockDataDir, ownerRuns, processStartTicks } from "../../src/store/data-dir-lock.ts";
import { tempDirsPerTest } from "../helpers/tmp.ts";

const newDir = tempDirsPerTest();

describe("ownerRuns", () => {
  const alive = (pid: number) => pid === 100 || pid === 200;
  const ticks = (pid: number) => (pid === 100 ? "5000" : pid === 200 ? "7000" : null);
  test.each([
    ["the owner runs, same start time", "100 5000\n", true],
    ["the PID runs but started later: reused after a crash", "100 4000\n", false],
    ["the owner is gone", "300 5000\n", false],
    ["no start time recorded (another OS): the PID decides", "200\n", true],
    ["not a PID", "hello\n", false],
    ["an empty file", "", false],
    ["PID 0 or negative", "0 1\n", false],
  ])("%s", (_name, text, expected) => {
    expect(ownerRuns(text, alive, ticks)).toBe(expected);
  });
});

describe("lockDataDir", () => {
  test("a second taker is refused while the owner holds it; after release it is free again", () => {
    const dir = join(newDir(), "data");
    const lock = lockDataDir(dir);
    expect(readFileSync(join(dir, LOCK_FILE), "utf8")).toBe(`${process.pid} ${processStartTicks(process.pid)}\n`);
    expect(() => lockDataDir(dir)).toThrow(`is in use by process ${process.pid}`);
    lock.release();
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
    lockDataDir(dir).release();
  });

  test("the lock of a process that is gone is taken over", () => {
    const dir = newDir();
    const gone = Bun.spawnSync([process.execPath, "-e", "console.log(process.pid)"], { stdout: "pipe" });
    writeFileSync(join(dir, LOCK_FILE), `${gone.stdout.toString().trim()} 123\n`);
    const lock = lockDataDir(dir);
    expect(readFileSync(join(dir, LOCK_FILE), "utf8")).toStartWith(`${process.pid} `);
    lock.release();
  });

  test("release leaves a lock that another process has taken since", () => {
    const dir = newDir();
    const lock = lockDataDir(dir);
    writeFileSync(join(dir, LOCK_FILE), "1 1\n");
    lock.release();
    expect(readFileSync(join(dir, LOCK_FILE), "utf8")).toBe("1 1\n");
  });
});
