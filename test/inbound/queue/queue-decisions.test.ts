// Table tests of the inbound queue's pure decisions (src/inbound/queue/queue-decisions.ts).
import { describe, expect, test } from "bun:test";
import { nextAttemptAt, retryResult, spamDecision, spamResponse, targetFailed } from "../../../src/inbound/queue/queue-decisions.ts";
import type { TargetOutcome } from "../../../src/inbound/targets/target-reply.ts";

const answered = (status: number): TargetOutcome => ({ kind: "answered", status, contentType: null, body: "" });

describe("targetFailed: what queue mode keeps instead of deferring", () => {
  test.each([
    [answered(500), true],
    [answered(503), true],
    [answered(599), true],
    [{ kind: "timeout" } as TargetOutcome, true],
    [{ kind: "unreachable", reason: "ECONNREFUSED" } as TargetOutcome, true],
    [answered(200), false],
    [answered(404), false],
    [answered(422), false],
    [answered(302), false],
    [answered(101), false],
    [{ kind: "local_failure", diskFull: true } as TargetOutcome, false],
  ])("%o → %p", (outcome, kept) => expect(targetFailed(outcome)).toBe(kept));
});

describe("retryResult: what a POST of a kept message comes to", () => {
  test.each([
    [answered(200), "delivered"],
    [answered(204), "delivered"],
    [answered(404), "rejected"],
    [answered(429), "rejected"],
    [answered(500), "retry"],
    [answered(302), "retry"],
    [{ kind: "timeout" } as TargetOutcome, "retry"],
    [{ kind: "local_failure", diskFull: false } as TargetOutcome, "retry"],
  ])("%o → %p", (outcome, result) => expect(retryResult(outcome)).toBe(result as never));
});

describe("nextAttemptAt: the delays in turn, the last repeating, until max_queue_time", () => {
  const delays = [60_000, 300_000, 900_000];
  test.each([
    // attempts, created, now, max → next
    [1, 0, 0, 86_400_000, 60_000],
    [2, 0, 60_000, 86_400_000, 360_000],
    [3, 0, 360_000, 86_400_000, 1_260_000],
    [9, 0, 1_000_000, 86_400_000, 1_900_000],
    [3, 0, 86_000_000, 86_400_000, null],
    [1, 0, 0, 59_999, null],
    [1, 0, 0, 60_000, 60_000],
  ])("after %p attempts (created %p, now %p, max %p) → %p", (attempts, created, now, max, next) =>
    expect(nextAttemptAt(attempts, created, now, delays, max)).toBe(next),
  );
});

describe("spamDecision", () => {
  const scored = (score: string) => ({ score, symbols: [], success: true, description: "SpamAssassin score" });
  test("no threshold: nothing to say, scored or not", () => {
    expect(spamDecision(null, scored("1000.0"), true)).toBeNull();
    expect(spamDecision(null, null, false)).toBeNull();
  });
  test("above the threshold: 550 5.7.1 with the score and the limit", () => {
    const d = spamDecision(5, scored("1000.0"), true);
    expect(spamResponse(d)).toBe("550 5.7.1 Message refused as spam: SpamAssassin score 1000.0 is above this address's limit of 5");
  });
  test("at or below the threshold: delivered, nothing said", () => {
    expect(spamDecision(5, scored("5.0"), true)).toBeNull();
    expect(spamDecision(5, scored("-1.2"), true)).toBeNull();
    expect(spamDecision(-2, scored("-1.9"), true)).not.toBeNull();
  });
  test("spamd could not score, or is off: delivered, and the status says so", () => {
    const failed = { score: "0.0", symbols: [], success: false, description: "SpamAssassin: ECONNREFUSED" };
    expect(spamDecision(5, failed, true)).toEqual({ note: "not scored for spam_threshold, delivered: SpamAssassin: ECONNREFUSED" });
    expect(spamDecision(5, null, false)).toEqual({ note: "not scored for spam_threshold: inbound.spamd is off" });
  });
});
