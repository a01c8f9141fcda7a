// The retention purge over a real store: rows of various ages written through the
// repositories as the appliance writes them (the test clock moving forward), one run of
// the job, and what is left. (Through the whole appliance and its API:
// test/e2e/retention.test.ts.)
import { describe, expect, test } from "bun:test";
import { createSendingDomainRepo } from "../../src/domains/sending-domains.repo.ts";
import type { NewEvent } from "../../src/events/message-event.ts";
import { createOutboxRepo } from "../../src/events/outbox.repo.ts";
import { createStatusRepo } from "../../src/inbound/statuses/statuses.repo.ts";
import { RetentionPurge } from "../../src/jobs/retention-purge.ts";
import type { RetentionSettings } from "../../src/jobs/retention.ts";
import { retentionPurges } from "../../src/jobs/retention-tables.ts";
import { ManualClock } from "../../src/lib/clock.ts";
import { silentLogger } from "../../src/lib/logger.ts";
import { createIdempotencyRepo, recordAnswer } from "../../src/outbound/sending/idempotency.repo.ts";
import { runSync } from "../../src/store/db/script.ts";
import { createStsRepo } from "../../src/outbound/delivery/mta-sts.repo.ts";
import { createOutboundRepo } from "../../src/outbound/queue/queue.repo.ts";
import { queuePorts } from "../../src/outbound/queue/wiring.ts";
import type { Purge } from "../../src/store/purge-window.ts";
import { openStore, type Store } from "../../src/store/store.ts";
import { queuedMessage, queuedRecipient } from "../helpers/queue-rows.ts";
import { tempDirsPerTest } from "../helpers/tmp.ts";
import { DAY, DEFAULTS, sendingDomain, status, T0 } from "./retention-rows.ts";

const newDir = tempDirsPerTest();

function setUp(settings: RetentionSettings = DEFAULTS) {
  const store = openStore(newDir());
  const clock = new ManualClock(T0);
  const statuses = createStatusRepo(store);
  const outbox = createOutboxRepo(store);
  const sendingDomains = createSendingDomainRepo(store.main);
  const outbound = createOutboundRepo(store, queuePorts(store));
  const purges = retentionPurges(store);
  const current = { settings };
  const job = (p: Record<string, Purge> = purges) =>
    new RetentionPurge({ purges: p as typeof purges, clock, logger: silentLogger, settings: () => current.settings });
  const close = () => {
    statuses.close();
    store.close();
  };
  return { store, clock, statuses, outbox, sendingDomains, outbound, purges, job, current, close };
}

const listedStatuses = async (repo: ReturnType<typeof createStatusRepo>) =>
  (await repo.list("acc", "addr", [], { limit: 100 })).items.map((s) => s.id).sort();
const count = (store: Store, table: string) => (store.db.query(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;

describe("one run", () => {
  test("deletes what is older than its retention and keeps the young, the queued and the events a webhook still waits for", async () => {
    const s = setUp();
    const { clock, outbound } = s;
    const event = (messageId: string, kind: NewEvent["kind"]): NewEvent => ({
      messageId,
      recipientId: `r-${messageId}`,
      kind,
      details: {},
      createdAtMs: clock.nowMs(),
    });
    /** A message sent now by outbound account `o` (`o-waiting` with `webhook`: its events wait for a webhook POST); `done`: its recipient delivered (else still queued, retried in 60 days). */
    const send = async (id: string, done: boolean, webhook = false, outboundAccountId = "o") => {
      const nowMs = clock.nowMs();
      await outbound.insert(
        queuedMessage(id, { createdAtMs: nowMs, outboundAccountId }),
        [queuedRecipient(`r-${id}`, id, { nextAttemptAtMs: nowMs })],
        [event(id, "registration")],
        { raw: Buffer.from(`raw ${id}`), webhook },
      );
      const update = done
        ? { status: "delivery" as const, state: "done" as const, attempts: 1, firstAttemptAtMs: nowMs, nextAttemptAtMs: nowMs }
        : {
            status: "soft_bounce" as const,
            state: "queued" as const,
            attempts: 1,
            firstAttemptAtMs: nowMs,
            nextAttemptAtMs: nowMs + 60 * DAY,
          };
      await outbound.update(`r-${id}`, update, [event(id, done ? "delivery" : "soft_bounce")], { webhook });
    };
    const domain = sendingDomain("dom1", "acc", "sender.test", T0);
    await s.sendingDomains.insert(domain);
    const check = async () =>
      s.sendingDomains.recordCheck(
        "dom1",
        {
          checks: domain.checks,
          reasons: {},
          health: null,
          verifiedAtMs: null,
          failingSinceMs: null,
          checkedAtMs: clock.nowMs(),
          nextCheckAtMs: clock.nowMs(),
        },
        [{ kind: "checked", details: {} }],
      );
    const sts = createStsRepo(s.store.main, clock);
    const policy = (id: string, expiresAtMs: number) => ({
      id,
      mode: "enforce" as const,
      mx: ["mx.example"],
      maxAgeSeconds: 86_400,
      expiresAtMs,
    });

    const keys = createIdempotencyRepo(s.store.log);
    const answeredKey = async (key: string) => {
      const ref = { outboundAccountId: "o", scope: "api" as const, key };
      await keys.claim(ref, clock.nowMs(), DAY);
      runSync(s.store.db, recordAnswer({ ...ref, requestSha256: "0".repeat(64), answer: "{}" }, clock.nowMs()));
    };

    // Day 0: the old rows.
    await s.statuses.record([status("s-old-1", clock.nowMs()), status("s-old-2", clock.nowMs())]);
    await answeredKey("k-old");
    await keys.claim({ outboundAccountId: "o", scope: "api", key: "k-in-flight" }, clock.nowMs(), DAY);
    await send("m-old", true);
    await send("m-old-queued", false);
    await send("m-old-webhook", true, true, "o-waiting");
    await check();
    // Day 31, 32, 39: rows whose retention is longer than their age, or shorter.
    clock.set(T0 + 31 * DAY);
    await send("m-body-old", true);
    clock.set(T0 + 32 * DAY);
    // Posted to the webhook (acknowledged) 8 days before the run: its outbox row goes, the events stay.
    await send("m-posted", true, true);
    const batch = await s.outbox.claimBatch("o", clock.nowMs(), 100, 60_000);
    expect(await s.outbox.finishSent(batch!.lease)).toBe(true);
    await sts.put("expired.example", policy("p1", T0 + 36 * DAY));
    await sts.put("just-expired.example", policy("p2", T0 + 40 * DAY - 3_600_000));
    await sts.put("valid.example", policy("p3", T0 + 50 * DAY));
    clock.set(T0 + 39 * DAY);
    await s.statuses.record([status("s-young", clock.nowMs())]);
    await send("m-young", true);
    await answeredKey("k-young");
    await check();
    clock.set(T0 + 40 * DAY);
    await s.statuses.flush();

    const deleted = await s.job().run();

    expect(deleted).toEqual({
      incoming_statuses: 2,
      messages: 1,
      bodies: 3,
      events: 0,
      webhook_outbox: 2,
      domain_events: 1,
      mta_sts_policies: 1,
      stats: 0,
      idempotency_keys: 1,
      webhook_posts: 0,
    });
    expect(await listedStatuses(s.statuses)).toEqual(["s-young"]);
    const messages = (await outbound.listMessages("o", [], { limit: 100 })).items.map((m) => m.id).sort();
    expect(messages).toEqual(["m-body-old", "m-old-queued", "m-posted", "m-young"]);
    // The queued message keeps its body and its events, whatever its age.
    expect((await outbound.rawMessage("m-old-queued"))?.toString()).toBe("raw m-old-queued");
    expect((await outbound.eventsOf(["r-m-old-queued"])).map((e) => e.kind)).toEqual(["registration", "soft_bounce"]);
    // Bodies go after 7 days; the messages stay until 30.
    expect(await outbound.rawMessage("m-body-old")).toBeNull();
    expect(await outbound.rawMessage("m-posted")).toBeNull();
    expect((await outbound.rawMessage("m-young"))?.toString()).toBe("raw m-young");
    // The message whose events are still waiting for the webhook stays (its body, not needed for that, goes), and the dispatcher still finds its events.
    expect(await outbound.getMessageById("m-old-webhook")).not.toBeNull();
    expect(await outbound.rawMessage("m-old-webhook")).toBeNull();
    expect((await outbound.eventsOf(["r-m-old-webhook"])).map((e) => e.kind)).toEqual(["registration", "delivery"]);
    expect((await s.outbox.claimBatch("o-waiting", clock.nowMs(), 100, 60_000))!.events.map((e) => e.kind)).toEqual([
      "registration",
      "delivery",
    ]);
    expect((await outbound.eventsOf(["r-m-posted"])).map((e) => e.kind)).toEqual(["registration", "delivery"]);
    // Nothing of the purged message is left behind.
    for (const table of ["outbound_recipients", "message_events", "outbound_message_bodies"]) {
      expect({ table, rows: s.store.db.query(`SELECT COUNT(*) AS n FROM ${table} WHERE message_id = 'm-old'`).get() }).toEqual({
        table,
        rows: { n: 0 },
      });
    }
    expect(count(s.store, "webhook_outbox")).toBe(2);
    expect(s.store.db.query("SELECT created_at FROM sending_domain_events").all()).toEqual([{ created_at: T0 + 39 * DAY }]);
    expect(await sts.get("expired.example")).toBeNull();
    expect((await sts.get("just-expired.example"))?.id).toBe("p2");
    expect((await sts.get("valid.example"))?.id).toBe("p3");
    // An answered key goes after a day; a claim still waiting for its answer stays.
    expect(s.store.db.query("SELECT key FROM idempotency_keys ORDER BY key").all()).toEqual([{ key: "k-in-flight" }, { key: "k-young" }]);

    // A second run finds nothing more.
    expect(Object.values(await s.job().run()).reduce((a, b) => a + b)).toBe(0);
    s.close();
  });

  test("events go after their own retention, from messages kept longer; events still waiting for the webhook stay", async () => {
    const s = setUp({ ...DEFAULTS, keepMs: { ...DEFAULTS.keepMs, messages: 90 * DAY, events: 5 * DAY } });
    const { clock, outbound } = s;
    const ev = (kind: NewEvent["kind"]): NewEvent => ({
      messageId: "m1",
      recipientId: "r1",
      kind,
      details: {},
      createdAtMs: clock.nowMs(),
    });
    await outbound.insert(queuedMessage("m1", { createdAtMs: T0 }), [queuedRecipient("r1", "m1")], [ev("registration")], {
      webhook: false,
    });
    await outbound.update(
      "r1",
      { status: "delivery", state: "done", attempts: 1, firstAttemptAtMs: T0, nextAttemptAtMs: T0 },
      [ev("delivery")],
      { webhook: false },
    );
    clock.set(T0 + 2 * DAY);
    await outbound.addEvents("r1", null, [ev("open")]);
    clock.set(T0 + 6 * DAY);
    await outbound.addEvents("r1", null, [ev("click")]);
    clock.set(T0 + 10 * DAY);

    expect((await s.job().run()).events).toBe(2);
    // The open is kept: its webhook POST is still to come.
    expect((await outbound.eventsOf(["r1"])).map((e) => e.kind)).toEqual(["open", "click"]);
    expect(await outbound.getMessageById("m1")).not.toBeNull();
    s.close();
  });

  test('"off" keeps a table forever', async () => {
    const s = setUp({ ...DEFAULTS, keepMs: { ...DEFAULTS.keepMs, incoming_statuses: null } });
    await s.statuses.record([status("s1", T0)]);
    await s.statuses.flush();
    s.clock.set(T0 + 3650 * DAY);
    expect((await s.job().run()).incoming_statuses).toBe(0);
    expect(await listedStatuses(s.statuses)).toEqual(["s1"]);
    s.close();
  });
});

describe("batches", () => {
  test("35 old statuses with batch_size 10 go in several statements of at most 10, with the event loop served between them", async () => {
    const s = setUp({ ...DEFAULTS, batchSize: 10 });
    for (let i = 0; i < 35; i++) await s.statuses.record([status(`old-${String(i).padStart(2, "0")}`, T0 + i)]);
    s.clock.set(T0 + 31 * DAY);
    await s.statuses.record([1, 2, 3, 4, 5].map((i) => status(`young-${i}`, s.clock.nowMs())));
    await s.statuses.flush();

    // Turns of the event loop: a task that comes back at every one.
    let turns = 0;
    let ticking = true;
    const tick = () => {
      turns++;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const calls: { deleted: number; turn: number }[] = [];
    const counted: Purge = async (beforeMs, after, limit) => {
      const step = await s.purges.incoming_statuses(beforeMs, after, limit);
      calls.push({ deleted: step.deleted, turn: turns });
      return step;
    };
    const deleted = await s.job({ ...s.purges, incoming_statuses: counted }).run();
    ticking = false;

    expect(deleted.incoming_statuses).toBe(35);
    expect(calls.map((c) => c.deleted)).toEqual([10, 10, 10, 5, 0]);
    for (let i = 1; i < calls.length; i++) expect(calls[i]!.turn).toBeGreaterThan(calls[i - 1]!.turn);
    expect(await listedStatuses(s.statuses)).toEqual(["young-1", "young-2", "young-3", "young-4", "young-5"]);
    s.close();
  });

  test("the walk steps over old messages still queued instead of stopping at them", async () => {
    const s = setUp({ ...DEFAULTS, batchSize: 3 });
    const { outbound } = s;
    // Seven queued messages at the head of the table, then five delivered ones, all old.
    for (let i = 0; i < 12; i++) {
      const id = `m${String(i).padStart(2, "0")}`;
      await outbound.insert(
        queuedMessage(id, { createdAtMs: T0 + i }),
        [queuedRecipient(`r${id}`, id, { state: i < 7 ? "queued" : "done", nextAttemptAtMs: T0 + 90 * DAY })],
        [],
        { webhook: false },
      );
    }
    s.clock.set(T0 + 31 * DAY);
    expect((await s.job().run()).messages).toBe(5);
    expect(count(s.store, "outbound_messages")).toBe(7);
    s.close();
  });

  test("stop() ends a run after its current window", async () => {
    const s = setUp({ ...DEFAULTS, batchSize: 1, batchPauseMs: 5 });
    for (let i = 0; i < 20; i++) await s.statuses.record([status(`old-${i}`, T0 + i)]);
    await s.statuses.flush();
    s.clock.set(T0 + 31 * DAY);
    // stop() called while the third window runs (not awaited there: it waits for the run).
    let windows = 0;
    let stopped: Promise<void> | null = null;
    const job: RetentionPurge = s.job({
      ...s.purges,
      incoming_statuses: async (beforeMs, after, limit) => {
        const step = await s.purges.incoming_statuses(beforeMs, after, limit);
        if (++windows === 3) stopped = job.stop();
        return step;
      },
    });
    const deleted = (await job.run()).incoming_statuses;
    await stopped;
    expect({ windows, deleted }).toEqual({ windows: 3, deleted: 3 });
    expect(count(s.store, "incoming_statuses")).toBe(17);
    s.close();
  });
});
