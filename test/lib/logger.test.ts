// The JSON-lines logger: lines of one event-loop turn leave in one write, a large burst
// does not wait for the turn's end, and a process that exits right after logging still
// prints the line (a real child process, its stdout a pipe as under systemd).
import { describe, expect, jest, test } from "bun:test";
import { batchedSink, createLogger, LOG_BATCH_MAX_CHARS } from "../../src/lib/logger.ts";

const LOGGER = new URL("../../src/lib/logger.ts", import.meta.url).pathname;

describe("batchedSink", () => {
  test("lines of one turn are written together at its end, in order", async () => {
    const writes: string[] = [];
    const sink = batchedSink((t) => writes.push(t));
    sink("one");
    sink("two");
    expect(writes).toEqual([]);
    await new Promise((r) => setImmediate(r));
    expect(writes).toEqual(["one\ntwo\n"]);
    sink("three");
    await new Promise((r) => setImmediate(r));
    expect(writes).toEqual(["one\ntwo\n", "three\n"]);
  });

  test("a burst past the batch size is written at once", () => {
    const writes: string[] = [];
    const sink = batchedSink((t) => writes.push(t));
    const line = "x".repeat(1023);
    for (let i = 0; i < LOG_BATCH_MAX_CHARS / 1024; i++) sink(line);
    expect(writes).toHaveLength(1);
    expect(writes[0]!.length).toBe(LOG_BATCH_MAX_CHARS);
  });

  test("with a hold time, routine lines wait for it across turns and leave in one write", async () => {
    // Bun's fake timers (setImmediate stays real): the hold ends when the test says.
    jest.useFakeTimers();
    try {
      const writes: string[] = [];
      const sink = batchedSink((t) => writes.push(t), undefined, 300);
      sink("one");
      await new Promise((r) => setImmediate(r));
      sink("two");
      await new Promise((r) => setImmediate(r));
      jest.advanceTimersByTime(299);
      expect(writes).toEqual([]);
      jest.advanceTimersByTime(1);
      expect(writes).toEqual(["one\ntwo\n"]);
    } finally {
      jest.useRealTimers();
    }
  });

  test("an urgent line goes out at the end of its turn, after the routine lines held before it", async () => {
    const writes: string[] = [];
    const sink = batchedSink((t) => writes.push(t), undefined, 10_000);
    sink("routine");
    sink("failure", true);
    sink("after");
    await new Promise((r) => setImmediate(r));
    expect(writes).toEqual(["routine\nfailure\nafter\n"]);
    // Nothing is left waiting for the old hold timer.
    sink("later");
    await new Promise((r) => setImmediate(r));
    expect(writes).toHaveLength(1);
  });

  test("warn and error lines are urgent, info and debug lines are not", () => {
    const seen: [string, boolean | undefined][] = [];
    const log = createLogger({ level: "debug", sink: (l, urgent) => seen.push([JSON.parse(l).level, urgent]) });
    log.debug("d");
    log.info("i");
    log.warn("w");
    log.error("e");
    expect(seen).toEqual([
      ["debug", false],
      ["info", false],
      ["warn", true],
      ["error", true],
    ]);
  });

  test("lines logged just before process.exit are printed", () => {
    const script = `import { createLogger } from ${JSON.stringify(LOGGER)};
const log = createLogger();
log.info("first");
log.error("fatal: giving up", { code: 7 });
process.exit(3);`;
    const proc = Bun.spawnSync([process.execPath, "-e", script], { stdout: "pipe", stderr: "pipe" });
    expect(proc.exitCode).toBe(3);
    const lines = proc.stdout
      .toString()
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => [l.level, l.msg])).toEqual([
      ["info", "first"],
      ["error", "fatal: giving up"],
    ]);
    expect(lines[1].code).toBe(7);
  });

  test("levels below the configured one are dropped", () => {
    const lines: string[] = [];
    const log = createLogger({ level: "warn", sink: (l) => lines.push(l) });
    log.info("quiet");
    log.warn("loud");
    expect(lines.map((l) => JSON.parse(l).msg)).toEqual(["loud"]);
  });
});

describe("createLogger", () => {
  test("errors, nested or not, and bigints are written readably; plain fields as they are", () => {
    const lines: Record<string, unknown>[] = [];
    const log = createLogger({ sink: (l) => lines.push(JSON.parse(l)) });
    log.error("failed", { err: new TypeError("bad input"), n: 2n });
    log.warn("nested", { detail: { cause: new Error("deep") } });
    log.child({ component: "inbound" }).info("delivered", { reply: 250, md5: "abc", ok: true });
    expect(lines[0]).toMatchObject({ level: "error", msg: "failed", err: { name: "TypeError", message: "bad input" }, n: "2" });
    expect((lines[0]!.err as { stack: string }).stack).toContain("bad input");
    expect(lines[1]).toMatchObject({ detail: { cause: { name: "Error", message: "deep" } } });
    expect(lines[2]).toMatchObject({ level: "info", msg: "delivered", component: "inbound", reply: 250, md5: "abc", ok: true });
    expect(typeof lines[2]!.ts).toBe("string");
  });
});

describe("child loggers", () => {
  // What each logger of a session's chain writes for the same call: the fields bound by
  // every ancestor, the nearest binding winning, and the line's own fields over all of them.
  const CASES: [
    name: string,
    log: (root: ReturnType<typeof createLogger>) => ReturnType<typeof createLogger>,
    fields: Record<string, unknown> | undefined,
    expected: Record<string, unknown>,
  ][] = [
    ["the root", (root) => root, { to: "a@b.c" }, { to: "a@b.c" }],
    ["a session", (root) => root.child({ session_id: "s1", ip: "127.0.0.1" }), undefined, { session_id: "s1", ip: "127.0.0.1" }],
    [
      "a message of the session",
      (root) => root.child({ session_id: "s1" }).child({ message_id: "m1", tls: null }),
      { to: "a@b.c" },
      { session_id: "s1", message_id: "m1", tls: null, to: "a@b.c" },
    ],
    [
      "a rebinding wins over its parent",
      (root) => root.child({ message_id: "m1" }).child({ message_id: "m2" }),
      undefined,
      { message_id: "m2" },
    ],
    ["the line's own field wins", (root) => root.child({ to: "x@b.c" }), { to: "a@b.c" }, { to: "a@b.c" }],
  ];
  test.each(CASES)("%s", (_name, make, fields, expected) => {
    const lines: Record<string, unknown>[] = [];
    make(createLogger({ sink: (l) => lines.push(JSON.parse(l)) })).info("inbound delivered", fields);
    const { ts, level, msg, ...rest } = lines[0]!;
    expect({ level, msg }).toEqual({ level: "info", msg: "inbound delivered" });
    expect(rest).toEqual(expected);
  });
});
