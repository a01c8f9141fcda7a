import { describe, expect, test } from "bun:test";
import { attemptOutcome, unpreparedOutcome } from "../../src/outbound/delivery/outcome.ts";
import type { ClaimedRecipient } from "../../src/outbound/queue/message.ts";

const MIN = 60_000;
const NOW = 100 * MIN;
const item = (attempts: number, firstAttemptAtMs: number | null, createdAtMs = 0) =>
  ({ message: { id: "m1", createdAtMs }, recipient: { id: "r1", attempts, firstAttemptAtMs } }) as unknown as ClaimedRecipient;

describe("attemptOutcome", () => {
  const TTL = 90 * 24 * 60 * MIN;
  test.each([
    // code, reply, permanent without reply, attempts so far, → status, state, next attempt, event kinds, bounce class, suppressed until
    [250, "250 2.0.0 OK", false, 0, "delivery", "done", NOW, ["delivery"], undefined, undefined],
    [550, "550 5.1.1 user unknown", false, 0, "bounce", "done", NOW, ["bounce"], "hard", NOW + TTL],
    [554, "554 5.7.1 blocked using zen.spamhaus.org", false, 0, "bounce", "done", NOW, ["bounce"], "block", null],
    [552, "552 5.2.2 mailbox full", false, 0, "bounce", "done", NOW, ["bounce"], "mailbox_full", null],
    [null, "no such domain", true, 0, "bounce", "done", NOW, ["bounce"], "hard", NOW + TTL],
    [
      451,
      "451 4.7.650 temporarily rate limited",
      false,
      0,
      "soft_bounce",
      "queued",
      NOW + 5 * MIN,
      ["soft_bounce"],
      "throttled",
      undefined,
    ],
    [null, "connection lost", false, 1, "soft_bounce", "queued", NOW + 15 * MIN, ["soft_bounce"], "transient", undefined],
    [421, "421 busy", false, 2, "retries_exhausted", "done", NOW, ["soft_bounce", "retries_exhausted"], "transient", undefined],
  ])(
    "%p %p (permanent %p) after %p attempts → %p",
    (code, response, permanentWithoutReply, attempts, status, state, next, kinds, cls, until) => {
      const o = attemptOutcome({
        item: item(attempts, attempts === 0 ? null : MIN),
        result: { code, response },
        suppressionTtlMs: TTL,
        mx: "mx.example.org",
        permanentWithoutReply,
        nowMs: NOW,
        retryDelaysMs: [5 * MIN, 15 * MIN, 60 * MIN],
        // Room for the first two retries only.
        maxQueueTimeMs: NOW + 30 * MIN,
      });
      expect(o.update).toEqual({
        status: status as never,
        state: state as never,
        attempts: attempts + 1,
        firstAttemptAtMs: attempts === 0 ? NOW : MIN,
        nextAttemptAtMs: next,
        ...(until === undefined ? {} : { suppress: until === null ? null : { reason: "bounce", expiresAtMs: until } }),
      });
      expect(o.events.map((e) => e.kind)).toEqual(kinds as never);
      expect(o.events[0]!.details).toEqual({
        mx: "mx.example.org",
        smtp_code: code,
        smtp_response: response,
        attempt: attempts + 1,
        ...(cls ? { bounce_class: cls } : {}),
      });
    },
  );

  test("retries_exhausted carries the attempts and the first attempt's time", () => {
    const o = attemptOutcome({
      item: item(2, MIN),
      result: { code: 421, response: "421 busy" },
      mx: null,
      permanentWithoutReply: false,
      nowMs: NOW,
      retryDelaysMs: [MIN],
      maxQueueTimeMs: 0,
      suppressionTtlMs: MIN,
    });
    expect(o.events[1]!.details).toEqual({ attempts: 3, first_attempt_at: new Date(MIN).toISOString() });
  });
});

describe("unpreparedOutcome: a copy that could not be made is an error event, never silence", () => {
  test.each([
    // permanent, attempts so far → status, state, next attempt, event kinds, retried
    [true, 0, "error", "done", NOW, ["error"], false],
    [true, 3, "error", "done", NOW, ["error"], false],
    [false, 0, "error", "queued", NOW + 5 * MIN, ["error"], true],
    [false, 1, "error", "queued", NOW + 15 * MIN, ["error"], true],
    [false, 2, "retries_exhausted", "done", NOW, ["error", "retries_exhausted"], false],
  ])("permanent %p after %p attempts → %p, %p", (permanent, attempts, status, state, next, kinds, retried) => {
    const o = unpreparedOutcome({
      item: item(attempts, attempts === 0 ? null : MIN),
      reason: "why",
      permanent,
      nowMs: NOW,
      retryDelaysMs: [5 * MIN, 15 * MIN, 60 * MIN],
      maxQueueTimeMs: NOW + 30 * MIN,
    });
    expect(o.update).toEqual({
      status: status as never,
      state: state as never,
      attempts: attempts + 1,
      firstAttemptAtMs: attempts === 0 ? NOW : MIN,
      nextAttemptAtMs: next,
    });
    expect(o.events.map((e) => e.kind)).toEqual(kinds as never);
    expect(o.events[0]).toEqual({
      messageId: "m1",
      recipientId: "r1",
      kind: "error",
      details: { message: "why", attempt: attempts + 1, retried },
      createdAtMs: NOW,
    });
  });
});
