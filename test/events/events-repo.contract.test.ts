// The EventRepo contract (events.port.ts), run on both engines: createEventRepo on SQLite
// and on PostgreSQL (its record is recordEvents, the queue's event log, in a transaction
// of its own). The same cases: events read back field for
// field with the same JS types (times and seq numbers, details as stored), oldest first
// across calls; only the asked recipients' events; each visible event queued for its own
// outbound account's webhook, internal kinds and `webhook: false` never.
import { describe, expect } from "bun:test";
import type { NewEvent } from "../../src/events/message-event.ts";
import { STORE_ENGINES } from "../helpers/engines.ts";
import { eventEngine } from "./outbox-rows.ts";

// Past 2^32 ms, so a 32-bit column or binding would show.
const NOW_MS = 1_795_000_000_000;

const event = (messageId: string, recipientId: string, kind: NewEvent["kind"], over: Partial<NewEvent> = {}): NewEvent => ({
  messageId,
  recipientId,
  kind,
  details: {},
  createdAtMs: NOW_MS,
  ...over,
});

describe.each(STORE_ENGINES)("message events on $name", (engine) => {
  const s = eventEngine(engine, [
    {
      id: "m-a",
      accountId: "acct-a",
      outboundAccountId: "oa",
      recipients: [
        { id: "r-a1", email: "one@a.test" },
        { id: "r-a2", email: "two@a.test" },
      ],
    },
    { id: "m-b", accountId: "acct-b", outboundAccountId: "ob", recipients: [{ id: "r-b1", email: "one@b.test" }] },
  ]);

  engine.test("events read back as recorded, with numbers and details of the same types, oldest first across calls", async () => {
    const details = {
      mx: "mx.a.test",
      smtp_code: 250,
      smtp_response: "2.0.0 Ok: queued as 4Zx",
      attempt: 1,
      nested: { ok: true, list: [1, "two", null] },
    };
    const first = await s.events.record([
      event("m-a", "r-a1", "registration", { createdAtMs: NOW_MS - 2 }),
      event("m-a", "r-a1", "dispatch", { createdAtMs: NOW_MS - 1 }),
    ]);
    const second = await s.events.record([event("m-a", "r-a1", "delivery", { details })]);
    const stored = [...first, ...second];
    expect(stored.map((e) => e.kind)).toEqual(["registration", "dispatch", "delivery"]);
    expect(stored[0]!.seq).toBeLessThan(stored[1]!.seq);
    expect(stored[1]!.seq).toBeLessThan(stored[2]!.seq);
    const read = await s.events.ofRecipients(["r-a1"]);
    expect(read).toStrictEqual(stored);
    expect(read[2]).toStrictEqual({
      id: stored[2]!.id,
      messageId: "m-a",
      recipientId: "r-a1",
      kind: "delivery",
      details,
      createdAtMs: NOW_MS,
      seq: stored[2]!.seq,
    });
    expect(typeof read[0]!.createdAtMs).toBe("number");
    expect(typeof read[0]!.seq).toBe("number");
  });

  engine.test("a read holds only the asked recipients' events, in seq order over them", async () => {
    const [a1] = await s.events.record([event("m-a", "r-a1", "registration")]);
    const [b1] = await s.events.record([event("m-b", "r-b1", "registration")]);
    const [a2] = await s.events.record([event("m-a", "r-a2", "registration")]);
    expect((await s.events.ofRecipients(["r-a2", "r-a1"])).map((e) => e.id)).toEqual([a1!.id, a2!.id]);
    expect((await s.events.ofRecipients(["r-b1"])).map((e) => e.id)).toEqual([b1!.id]);
    expect(await s.events.ofRecipients(["r-nobody"])).toEqual([]);
    expect(await s.events.ofRecipients([])).toEqual([]);
  });

  engine.test(
    "each visible event is queued for its own outbound account's webhook; internal kinds and webhook: false are not",
    async () => {
      await s.events.record([event("m-a", "r-a1", "registration"), event("m-a", "r-a1", "spamd"), event("m-a", "r-a2", "registration")]);
      await s.events.record([event("m-b", "r-b1", "registration")]);
      await s.events.record([event("m-b", "r-b1", "dispatch")], { webhook: false });
      expect(await s.events.ofRecipients(["r-a1", "r-a2", "r-b1"])).toHaveLength(5);
      expect(await s.outbox.countPending()).toBe(3);
      expect((await s.outbox.pendingTargets()).map((t) => t.target).sort()).toEqual(["oa", "ob"]);
      const a = await s.outbox.claimBatch("oa", NOW_MS, 100, 60_000);
      expect(a!.events.map((e) => [e.accountId, e.outboundAccountId, e.recipient, e.kind])).toEqual([
        ["acct-a", "oa", "one@a.test", "registration"],
        ["acct-a", "oa", "two@a.test", "registration"],
      ]);
      const b = await s.outbox.claimBatch("ob", NOW_MS, 100, 60_000);
      expect(b!.events.map((e) => [e.accountId, e.outboundAccountId, e.recipient, e.kind])).toEqual([
        ["acct-b", "ob", "one@b.test", "registration"],
      ]);
    },
  );
  engine.test(
    "one call over several messages queues each event for its own message's accounts; a message not stored gets none; past a statement's rows, every event",
    async () => {
      const stored = await s.events.record([
        event("m-a", "r-a1", "registration"),
        event("m-b", "r-b1", "registration"),
        event("m-gone", "r-x", "registration"),
        event("m-a", "r-a2", "registration"),
      ]);
      expect(stored.map((e) => e.messageId)).toEqual(["m-a", "m-b", "m-gone", "m-a"]);
      expect(await s.outbox.countPending()).toBe(3);
      const a = await s.outbox.claimBatch("oa", NOW_MS, 100, 60_000);
      expect(a!.events.map((e) => [e.accountId, e.recipient])).toEqual([
        ["acct-a", "one@a.test"],
        ["acct-a", "two@a.test"],
      ]);
      const b = await s.outbox.claimBatch("ob", NOW_MS, 100, 60_000);
      expect(b!.events.map((e) => [e.accountId, e.recipient])).toEqual([["acct-b", "one@b.test"]]);
      // 1,201 events in one call: more rows than one multi-row statement takes (500).
      const many = await s.events.record(
        Array.from({ length: 1201 }, (_, i) => event(i % 2 === 0 ? "m-a" : "m-b", i % 2 === 0 ? "r-a1" : "r-b1", "dispatch")),
      );
      expect(new Set(many.map((e) => e.id)).size).toBe(1201);
      expect(await s.events.ofRecipients(["r-a1", "r-b1"])).toHaveLength(1203);
      // The three claimed above are pending too (leased) until their batches end.
      expect(await s.outbox.countPending()).toBe(3 + 1201);
    },
  );
});
