// Issue 34's queue changes on both engines: a batch stored in one transaction with one
// idempotency answer (all or nothing), a scheduled recipient not claimed before its
// send_at, a reschedule (refused once a recipient was attempted or is held, or when nothing
// waits), and E12's search terms status:scheduled and metadata.<key>:<value>.
import { afterAll, beforeAll, beforeEach, describe, expect } from "bun:test";
import { parseSearchQuery } from "../../src/lib/search-query.ts";
import { MESSAGE_SEARCH_FIELDS } from "../../src/outbound/queue/queue.repo.ts";
import type { OutboundRepo } from "../../src/outbound/queue/queue.port.ts";
import { STORE_ENGINES } from "../helpers/engines.ts";
import { queuedMessage, queuedRecipient } from "../helpers/queue-rows.ts";
import { delivered, event, ids, LEASE_MS, NOW, type OpenedQueue, openQueue, QUEUE_TABLES, queueIn } from "./queue-engines.ts";

describe.each(STORE_ENGINES)("scheduled sends and batches on $name", (engine) => {
  const it = engine.test;
  let opened: OpenedQueue | undefined;
  const repo = (): OutboundRepo => opened!.repo;
  const search = async (query: string) =>
    (await repo().listMessages("o", parseSearchQuery(query, MESSAGE_SEARCH_FIELDS), { limit: 50 })).items.map((m) => m.id);
  const queued = (id: string, sendAtMs: number | null, metadata: Record<string, string> = {}) => ({
    message: queuedMessage(id, { createdAtMs: NOW, sendAtMs, metadata }),
    recipients: [queuedRecipient(`r-${id}`, id, { nextAttemptAtMs: sendAtMs ?? NOW })],
    events: [event(id, `r-${id}`, "registration")],
    raw: Buffer.from(`message ${id}`),
  });

  beforeAll(async () => {
    if (engine.available()) opened = await openQueue(engine);
  }, 60_000);
  beforeEach(async () => {
    await opened?.handle.clear(QUEUE_TABLES);
  });
  afterAll(async () => {
    await opened?.handle.close();
  });

  it("insertMany stores every message, body, recipient and event with one idempotency answer; all or nothing", async () => {
    const answer = {
      outboundAccountId: "o",
      scope: "api" as const,
      key: "batch",
      requestSha256: "cd".repeat(32),
      answer: '{"results":[]}',
    };
    await repo().insertMany([queued("m1", null, { order_id: "1" }), queued("m2", NOW + 60_000)], { answer, webhook: false });
    expect((await repo().getMessageById("m1"))!.metadata).toEqual({ order_id: "1" });
    expect((await repo().getMessageById("m2"))!.sendAtMs).toBe(NOW + 60_000);
    expect((await repo().rawMessage("m2"))!.toString()).toBe("message m2");
    expect(await opened!.count("message_events", "recipient_id", "r-m2")).toBe(1);
    expect(await opened!.count("idempotency_keys", "answer", answer.answer)).toBe(1);
    // A batch whose second message collides with a stored one stores nothing.
    await expect(repo().insertMany([queued("m3", null), queued("m1", null)], { webhook: false })).rejects.toThrow();
    expect(await repo().getMessageById("m3")).toBeNull();
    expect(await opened!.row("r-m3")).toBeNull();
  });

  it("a scheduled recipient is not claimed before send_at, and is at it", async () => {
    await repo().insertMany([queued("m1", NOW + 60_000)], { webhook: false });
    expect(ids(await repo().claimDue("w1", NOW, NOW + LEASE_MS, 10, []))).toEqual([]);
    expect(await repo().nextDueMs()).toBe(NOW + 60_000);
    expect(ids(await repo().claimDue("w1", NOW + 60_000, NOW + 60_000 + LEASE_MS, 10, []))).toEqual(["r-m1"]);
  });

  it("reschedule moves a waiting message; refused once a recipient is held or attempted, or when nothing waits", async () => {
    await repo().insertMany([queued("m1", NOW + 60_000), queued("m2", NOW + 60_000)], { webhook: false });
    expect(await repo().reschedule("m1", NOW + 120_000, NOW)).toEqual({ rescheduled: 1 });
    expect((await repo().getMessageById("m1"))!.sendAtMs).toBe(NOW + 120_000);
    expect(ids(await repo().claimDue("w1", NOW + 60_000, NOW + 60_000 + LEASE_MS, 10, []))).toEqual(["r-m2"]);
    // m2 is held by w1 now: being delivered.
    expect(await repo().reschedule("m2", NOW + 120_000, NOW + 60_000)).toEqual({ refused: "attempted" });
    await repo().finishAttempt("w1", "r-m2", delivered(1), [], NOW + 60_001, { webhook: false });
    expect(await repo().reschedule("m2", NOW + 120_000, NOW + 60_002)).toEqual({ refused: "attempted" });
    await repo().cancelQueued("m1", NOW, { webhook: false });
    expect(await repo().reschedule("m1", NOW + 120_000, NOW)).toEqual({ refused: "nothing_waits" });
  });

  it("search: status:scheduled finds messages waiting for their send_at; metadata.<key>:<value> one value exactly", async () => {
    await queueIn(repo(), "now", [["r-now", {}]], { createdAtMs: NOW, metadata: { order_id: "A-1", Customer: "Ann Lee" } });
    await repo().insertMany([queued("later", NOW + 60_000, { order_id: "A-2" })], { webhook: false });
    expect(await search("status:scheduled")).toEqual(["later"]);
    expect(await search("status:SCHEDULED metadata.order_id:A-2")).toEqual(["later"]);
    expect(await search("metadata.order_id:A-1")).toEqual(["now"]);
    expect(await search("metadata.order_id:A")).toEqual([]);
    expect(await search('metadata.Customer:"Ann Lee"')).toEqual(["now"]);
    expect(await search("metadata.customer:Ann")).toEqual([]);
    // Only metadata takes a dotted field: another dotted word stays a word, as before.
    expect(parseSearchQuery("example.org:25", MESSAGE_SEARCH_FIELDS)).toEqual([{ field: null, op: "=", value: "example.org:25" }]);
  });
});
