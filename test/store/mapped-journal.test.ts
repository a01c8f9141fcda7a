// The memory-mapped journal: records read back in order up to the end or to a record cut
// short; a full journal says so; records survive kill -9 of the process that wrote them
// (a real child process) and are handed to the next one that opens the file.
import { describe, expect, test } from "bun:test";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { MappedJournal, readRecords } from "../../src/store/mapped-journal.ts";
import { tempDirsPerTest } from "../helpers/tmp.ts";

const newDir = tempDirsPerTest();

/** Journal bytes built by hand: [u32 length][u32 crc32][payload] per record, then `tail`. */
function bytes(
  records: (string | { payload: string; crc?: number; length?: number })[],
  tail: number[] = [0, 0, 0, 0],
  size = 256,
): Uint8Array {
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  let at = 0;
  for (const r of records) {
    const { payload, crc, length } = typeof r === "string" ? { payload: r, crc: undefined, length: undefined } : r;
    const data = new TextEncoder().encode(payload);
    view.setUint32(at, length ?? data.length, true);
    view.setUint32(at + 4, crc ?? Bun.hash.crc32(data), true);
    out.set(data, at + 8);
    at += 8 + data.length;
  }
  out.set(tail, at);
  return out;
}

describe("readRecords", () => {
  test.each([
    ["an empty journal", bytes([]), []],
    ["records up to the terminator", bytes(['{"a":1}', '{"b":2}']), [{ a: 1 }, { b: 2 }]],
    [
      "stale records behind the terminator are not read",
      bytes(['{"a":1}'], [0, 0, 0, 0, ...bytes(['{"old":true}']).slice(0, 32)]),
      [{ a: 1 }],
    ],
    [
      "a record whose checksum fails ends the journal (a write cut short)",
      bytes(['{"a":1}', { payload: '{"b":2}', crc: 7 }, '{"c":3}']),
      [{ a: 1 }],
    ],
    ["a length past the end of the file ends it", bytes(['{"a":1}', { payload: '{"b":2}', length: 10_000 }]), [{ a: 1 }]],
    ["a payload that is not JSON ends it", bytes(['{"a":1}', "not json"]), [{ a: 1 }]],
    ["no room for a header at the very end", new Uint8Array(5), []],
  ])("%s", (_name, journalBytes, expected) => {
    expect(readRecords(journalBytes)).toEqual(expected);
  });
});

describe("MappedJournal", () => {
  test("appends until full, then says so; after clear() it takes records again", () => {
    const path = join(newDir(), "j");
    const journal = MappedJournal.open(path, 128, () => {});
    expect(statSync(path).size).toBe(128);
    let appended = 0;
    while (journal.append({ n: appended, pad: "x".repeat(20) })) appended++;
    // 8 bytes of header and 36 of JSON each, 4 for the terminator: a third needs 136 of 128.
    expect(appended).toBe(2);
    expect(readRecords(readFileSync(path)).map((r) => (r as { n: number }).n)).toEqual([0, 1]);
    journal.clear();
    expect(readRecords(readFileSync(path))).toEqual([]);
    expect(journal.append({ n: 9 })).toBe(true);
    expect(readRecords(readFileSync(path))).toEqual([{ n: 9 }]);
    journal.close();
    expect(() => journal.append({ n: 10 })).toThrow("closed");
  });

  test("the records a previous run left are replayed, then the journal starts empty", () => {
    const path = join(newDir(), "j");
    const first = MappedJournal.open(path, 1024, () => {});
    first.append({ n: 1 });
    first.append({ n: 2 });
    first.close();
    const replayed: unknown[] = [];
    const second = MappedJournal.open(path, 1024, (records) => replayed.push(...records));
    expect(replayed).toEqual([{ n: 1 }, { n: 2 }]);
    expect(readRecords(readFileSync(path))).toEqual([]);
    second.close();
  });

  test("a replay that fails leaves the records for the next attempt", () => {
    const path = join(newDir(), "j");
    const first = MappedJournal.open(path, 1024, () => {});
    first.append({ n: 1 });
    first.close();
    expect(() =>
      MappedJournal.open(path, 1024, () => {
        throw new Error("database is locked");
      }),
    ).toThrow("database is locked");
    const replayed: unknown[] = [];
    MappedJournal.open(path, 1024, (records) => replayed.push(...records)).close();
    expect(replayed).toEqual([{ n: 1 }]);
  });

  test("a journal of another size is read, then made again at the new size", () => {
    const path = join(newDir(), "j");
    writeFileSync(path, bytes(['{"n":1}'], [0, 0, 0, 0], 64));
    const replayed: unknown[] = [];
    const journal = MappedJournal.open(path, 512, (records) => replayed.push(...records));
    expect(replayed).toEqual([{ n: 1 }]);
    expect(statSync(path).size).toBe(512);
    journal.close();
  });

  test("a record survives kill -9 of the process the moment append() returns", () => {
    const path = join(newDir(), "j");
    const module = new URL("../../src/store/mapped-journal.ts", import.meta.url).pathname;
    const script = `import { MappedJournal } from ${JSON.stringify(module)};
const journal = MappedJournal.open(${JSON.stringify(path)}, 4096, () => {});
journal.append({ status: "delivered", n: 1 });
journal.append({ status: "rejected", n: 2 });
process.kill(process.pid, "SIGKILL");`;
    const proc = Bun.spawnSync([process.execPath, "-e", script], { stdout: "pipe", stderr: "pipe" });
    expect(proc.signalCode).toBe("SIGKILL");
    const replayed: unknown[] = [];
    MappedJournal.open(path, 4096, (records) => replayed.push(...records)).close();
    expect(replayed).toEqual([
      { status: "delivered", n: 1 },
      { status: "rejected", n: 2 },
    ]);
  });
});
