// One line per streak of failures, not one per failed turn (src/lib/failure-streak.ts).
import { expect, test } from "bun:test";
import { FailureStreak } from "../../src/lib/failure-streak.ts";
import { createLogger } from "../../src/lib/logger.ts";

function logged() {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({ level: "debug", sink: (line) => void lines.push(JSON.parse(line)) });
  return { lines, logger };
}

test("a streak logs its first failure, then at most once per repeatEveryMs, and its end", () => {
  const { lines, logger } = logged();
  let nowMs = 0;
  const streak = new FailureStreak(logger, "warn", "reading destination pauses failed", 3_000, () => nowMs);
  streak.succeeded();
  // A failure a second: the first, the one 3 s after it, the one 3 s after that.
  for (let i = 0; i < 7; i++, nowMs += 1_000) streak.failed(new Error(`down ${i}`), { job: "x" });
  streak.succeeded();
  streak.succeeded();
  streak.failed(new Error("down again"));
  expect(lines.map((l) => [l.level, l.msg, l.failures_in_a_row, (l.err as { message?: string } | undefined)?.message])).toEqual([
    ["warn", "reading destination pauses failed", 1, "down 0"],
    ["warn", "reading destination pauses failed", 4, "down 3"],
    ["warn", "reading destination pauses failed", 7, "down 6"],
    ["info", "reading destination pauses failed: works again", 7, undefined],
    ["warn", "reading destination pauses failed", 1, "down again"],
  ]);
  expect(lines[0]!.job).toBe("x");
});
