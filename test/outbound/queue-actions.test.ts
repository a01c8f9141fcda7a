// The pure parts of the operator's queue actions: the filter and the redeliver request read
// from the wire (the field and rule of each mistake, as the API's 422 names them), the
// worker kicked only when an action made something due, and the expired-suppressions job
// deleting in batches until none is left.
import { describe, expect, test } from "bun:test";
import { silentLogger } from "../../src/lib/logger.ts";
import type { QueueControlRepo } from "../../src/outbound/queue/queue-control.port.ts";
import { parseFilter, parseRedeliver, runQueueAction, redeliver } from "../../src/outbound/queue/queue-actions.ts";
import { SUPPRESSION_PURGE_BATCH_ROWS, suppressionExpiryJob } from "../../src/outbound/suppressions/expiry-job.ts";

describe("parseFilter", () => {
  test.each([
    [{ destination: "gmail.com" }, { destination: "gmail.com" }],
    [
      { message_id: "m1", older_than: "2h" },
      { messageId: "m1", olderThanMs: 7_200_000 },
    ],
    [
      { outbound_account_id: "o1", older_than: "3d" },
      { outboundAccountId: "o1", olderThanMs: 3 * 86_400_000 },
    ],
  ])("%p → %p", (wire, filter) => {
    expect(parseFilter(wire)).toEqual({ ok: true, value: expect.objectContaining(filter) });
  });
  test.each([
    [{}, "destination"],
    [{ older_than: "1h" }, "destination"],
    [{ destination: "a.example", older_than: "soon" }, "older_than"],
    [{ destination: "a.example", older_than: "400d" }, "older_than"],
  ])("%p is refused naming %p", (wire, field) => {
    const parsed = parseFilter(wire);
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.problem.field).toBe(field);
  });
});

describe("parseRedeliver", () => {
  test("a class and an ISO time", () => {
    expect(parseRedeliver({ bounce_class: "BLOCK", since: "2026-11-27T09:00:00Z", destination: "a.example" })).toEqual({
      ok: true,
      value: { bounceClass: "block", sinceMs: Date.parse("2026-11-27T09:00:00Z"), destination: "a.example", outboundAccountId: undefined },
    });
  });
  test.each([
    [{ bounce_class: "spam", since: "2026-11-27" }, "bounce_class"],
    [{ bounce_class: "block", since: "yesterday" }, "since"],
    [{ bounce_class: "block", since: "1700000000" }, "since"],
  ])("%p is refused naming %p", (wire, field) => {
    const parsed = parseRedeliver(wire);
    expect(!parsed.ok && parsed.problem.field).toBe(field);
  });
});

describe("runQueueAction and redeliver kick the worker only when something became due", () => {
  const deps = (affected: number) => {
    const kicks = { n: 0 };
    const repo = {
      hold: async () => affected,
      release: async () => affected,
      retry: async () => affected,
      cancel: async () => affected,
      redeliver: async () => affected,
    } as unknown as QueueControlRepo;
    return { kicks, d: { repo, nowMs: () => 0, kick: () => void kicks.n++, webhook: () => false } };
  };
  test.each([
    ["hold", 3, 0],
    ["cancel", 3, 0],
    ["release", 3, 1],
    ["retry", 3, 1],
    ["release", 0, 0],
    ["retry", 0, 0],
  ] as const)("%s affecting %d kicks %d time(s)", async (action, affected, kicks) => {
    const { d, kicks: k } = deps(affected);
    expect(await runQueueAction(d, action, { destination: "a.example" })).toBe(affected);
    expect(k.n).toBe(kicks);
  });
  test("redeliver", async () => {
    const { d, kicks } = deps(2);
    expect(await redeliver(d, { bounceClass: "block", sinceMs: 0 })).toBe(2);
    expect(kicks.n).toBe(1);
  });
});

test("the expired-suppressions job deletes batch after batch until a batch is not full", async () => {
  const answers = [SUPPRESSION_PURGE_BATCH_ROWS, SUPPRESSION_PURGE_BATCH_ROWS, 3];
  const asked: number[] = [];
  const job = suppressionExpiryJob(
    {
      purgeExpired: async (nowMs, limit) => {
        asked.push(nowMs);
        expect(limit).toBe(SUPPRESSION_PURGE_BATCH_ROWS);
        return answers.shift() ?? 0;
      },
    },
    () => 42,
    silentLogger,
  );
  expect(job).toMatchObject({ name: "purge-expired-suppressions", oncePerCluster: true });
  expect(await job.run()).toBe(2 * SUPPRESSION_PURGE_BATCH_ROWS + 3);
  expect(asked).toEqual([42, 42, 42]);
});
