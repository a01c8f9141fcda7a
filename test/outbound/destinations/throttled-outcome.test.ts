// What a throttle reply does to a recipient (issue 29): it keeps its place (no attempt
// counted, its due time as it was) and its deferral says bounce_class "throttled"; only a
// message past outbound.max_queue_time is given up.
import { describe, expect, test } from "bun:test";
import { throttledOutcome } from "../../../src/outbound/delivery/outcome.ts";
import { queuedMessage, queuedRecipient } from "../../helpers/queue-rows.ts";

const DAY_MS = 86_400_000;
const item = (createdAtMs: number) => ({
  message: queuedMessage("m1", { createdAtMs }),
  recipient: queuedRecipient("r1", "m1", { attempts: 2, firstAttemptAtMs: createdAtMs + 1000, nextAttemptAtMs: createdAtMs + 60_000 }),
});
const result = { code: 421, response: "4.7.28 rate limited" };

describe("throttledOutcome", () => {
  test("keeps the recipient's place: attempts, first attempt and due time unchanged", () => {
    const o = throttledOutcome({ item: item(0), result, mx: "mx.google.com", nowMs: 120_000, maxQueueTimeMs: 5 * DAY_MS });
    expect(o.update).toEqual({ status: "soft_bounce", state: "queued", attempts: 2, firstAttemptAtMs: 1000, nextAttemptAtMs: 60_000 });
    expect(o.events.map((e) => [e.kind, e.details])).toEqual([
      ["soft_bounce", { mx: "mx.google.com", smtp_code: 421, smtp_response: "4.7.28 rate limited", attempt: 3, bounce_class: "throttled" }],
    ]);
  });

  test("a message past max_queue_time is given up all the same", () => {
    const o = throttledOutcome({ item: item(0), result, mx: null, nowMs: 5 * DAY_MS + 1, maxQueueTimeMs: 5 * DAY_MS });
    expect([o.update.status, o.update.state, o.update.attempts]).toEqual(["retries_exhausted", "done", 2]);
    expect(o.events.map((e) => e.kind)).toEqual(["soft_bounce", "retries_exhausted"]);
  });
});
