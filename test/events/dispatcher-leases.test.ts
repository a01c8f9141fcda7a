// The webhook dispatcher on either engine's outbox, posting to a real receiver (Bun.serve,
// checking every signature with the standardwebhooks library): each batch is claimed under
// a lease (webhooks.lease_time) and its outcome recorded only while the lease is the
// dispatcher's. On both engines: events arrive signed, once, in order, and a refused batch
// comes again as the same batch; a dispatcher whose lease ran out cannot acknowledge (the
// next holder posts the same batch again); "retry now" during this node's own POST does
// not post it twice. On PostgreSQL: two dispatchers (two SQL clients, as two nodes) post
// the events of many messages, each event once and each message's events in order.
import { SQL } from "bun";
import { afterEach, beforeEach, describe, expect } from "bun:test";
import { AccountRegistry } from "../../src/auth/accounts.ts";
import type { Config } from "../../src/config/config.ts";
import { parseConfigText } from "../../src/config/load.ts";
import { WebhookDispatcher } from "../../src/events/dispatcher.ts";
import type { MessageEvent, NewEvent } from "../../src/events/message-event.ts";
import { createPgOutboxRepo } from "../../src/events/outbox.pg.repo.ts";
import type { OutboxRepo } from "../../src/events/outbox.port.ts";
import { type Clock, ManualClock, systemClock } from "../../src/lib/clock.ts";
import { createResolver } from "../../src/lib/dns.ts";
import { createLogger, silentLogger } from "../../src/lib/logger.ts";
import { STORE_ENGINES } from "../helpers/engines.ts";
import { eventually } from "../helpers/sink.ts";
import { WebhookReceiver } from "../helpers/webhook-receiver.ts";
import { addMessage, eventEngine, type SentMessage } from "./outbox-rows.ts";

const ACCOUNT = "a000000000000001";
const OUTBOUND = ["a0000000000000f1", "a0000000000000f2", "a0000000000000f3"];
const SECRET = "whsec_" + Buffer.from("postroom dispatcher lease secret").toString("base64");
const LEASE_MS = 5000;
const LEASE_LOST = "webhook batch lease lost; its outcome is not recorded";

function configFor(receiver: WebhookReceiver, batchSize = 100): Config {
  const parsed = parseConfigText(`
[webhooks]
allow_private = true
timeout = "2s"
lease_time = "${LEASE_MS}ms"
retry_delays = ["10s"]
batch_size = ${batchSize}
[[accounts]]
id = "${ACCOUNT}"
webhook = { url = "${receiver.url}", token = "t", signing_secret = "${SECRET}" }
${OUTBOUND.map((id) => `[[accounts.outbound]]\nid = "${id}"`).join("\n")}
`);
  if (!parsed.ok) throw new Error(parsed.problems.join("; "));
  return parsed.config;
}

/** A node's dispatcher; its warnings go to `warnings`. */
function dispatcher(
  repo: OutboxRepo,
  config: Config,
  clock: Clock,
  opts: { warnings?: { msg: string; batch?: string }[]; userAgent?: string } = {},
): WebhookDispatcher {
  return new WebhookDispatcher({
    repo,
    config: () => config,
    registry: AccountRegistry.fromConfig(config),
    // Receivers are IP literals: nothing is resolved.
    resolver: createResolver({ servers: ["127.0.0.1:9"] }),
    clock,
    logger: opts.warnings ? createLogger({ level: "warn", sink: (line) => opts.warnings!.push(JSON.parse(line)) }) : silentLogger,
    userAgent: opts.userAgent ?? "test",
  });
}

const message = (id: string, outboundAccountId = OUTBOUND[0]!): SentMessage => ({
  id,
  accountId: ACCOUNT,
  outboundAccountId,
  recipients: [{ id: `r-${id}`, email: `${id}@x.test` }],
});
const ev = (messageId: string, kind: NewEvent["kind"], createdAtMs: number): NewEvent => ({
  messageId,
  recipientId: `r-${messageId}`,
  kind,
  details: { kind },
  createdAtMs,
});
const ids = (events: { id: string }[]) => events.map((e) => e.id);
const MESSAGES = Array.from({ length: 24 }, (_, i) => message(`n${i}`, OUTBOUND[i % OUTBOUND.length]));
const KINDS: NewEvent["kind"][] = ["registration", "dispatch", "delivery", "open"];

describe.each(STORE_ENGINES)("webhook dispatcher on $name", (engine) => {
  const s = eventEngine(engine, [message("m1"), message("m2")]);
  let receiver: WebhookReceiver;
  let config: Config;
  let clock: ManualClock;
  let second: { repo: OutboxRepo; close(): Promise<void> };
  beforeEach(() => {
    receiver = WebhookReceiver.start(SECRET);
    config = configFor(receiver);
    clock = new ManualClock(Date.now());
    // Another node: on PostgreSQL its own SQL client; on SQLite the same store.
    const h = s.handle;
    if (h?.kind === "postgres") {
      const sql = new SQL(h.url, { max: 2 });
      second = { repo: createPgOutboxRepo(sql), close: () => sql.close() };
    } else second = { repo: s.outbox, close: async () => {} };
  });
  afterEach(async () => {
    await receiver.stop();
    await second.close();
  });

  engine.test("events arrive signed and in order; a refused POST comes again as the same batch, then the next batch", async () => {
    const recorded = [
      ...(await s.events.record([ev("m1", "registration", clock.nowMs()), ev("m2", "registration", clock.nowMs())])),
      ...(await s.events.record([ev("m1", "dispatch", clock.nowMs())])),
    ];
    receiver.script.push(500);
    const d = dispatcher(s.outbox, config, clock);
    d.start();
    await eventually(() => receiver.posts.length === 1, 10_000, "the first POST");
    await d.idle();
    // Refused: due again after retry_delays (10 s, up to 10 % more).
    expect(await s.outbox.pendingOf(OUTBOUND[0]!)).toMatchObject({ events: 3 });
    clock.advance(11_001);
    d.kick();
    await eventually(() => receiver.posts.length === 2, 10_000, "the retried POST");
    await eventually(async () => (await s.outbox.countPending()) === 0, 10_000, "the batch acknowledged");
    const later = await s.events.record([ev("m1", "delivery", clock.nowMs())]);
    d.kick();
    await eventually(() => receiver.posts.length === 3, 10_000, "the next batch");
    await d.stop();

    const [refused, retried, next] = receiver.posts;
    expect(receiver.posts.map((p) => p.verified)).toEqual([true, true, true]);
    expect(retried!.headers["webhook-id"]).toBe(refused!.headers["webhook-id"]!);
    expect(ids(refused!.body.events)).toEqual(ids(recorded));
    expect(ids(retried!.body.events)).toEqual(ids(recorded));
    expect(next!.headers["webhook-id"]).not.toBe(refused!.headers["webhook-id"]!);
    expect(ids(next!.body.events)).toEqual(ids(later));
    expect(receiver.acknowledged().map((e) => [e.message_id, e.kind])).toEqual([
      ["m1", "registration"],
      ["m2", "registration"],
      ["m1", "dispatch"],
      ["m1", "delivery"],
    ]);
  });

  engine.test("a dispatcher whose lease ran out cannot acknowledge: the next holder posts the same batch again", async () => {
    const recorded = await s.events.record([ev("m1", "registration", clock.nowMs()), ev("m1", "dispatch", clock.nowMs())]);
    const warningsA: { msg: string; batch?: string }[] = [];
    const warningsB: { msg: string; batch?: string }[] = [];
    const a = dispatcher(s.outbox, config, clock, { warnings: warningsA });
    const b = dispatcher(second.repo, config, clock, { warnings: warningsB });
    const heldA = receiver.holdNext();
    const heldB = receiver.holdNext();
    a.start();
    await heldA.arrived;
    // While A's lease runs, B finds nothing to post.
    b.start();
    await b.idle();
    expect(await s.outbox.pendingTargets()).toEqual([{ target: OUTBOUND[0]!, dueMs: clock.nowMs() + LEASE_MS }]);
    // A's POST outlives its lease (in the clock's time): B claims the batch and posts it.
    clock.advance(LEASE_MS);
    b.kick();
    await heldB.arrived;
    // A's receiver answers 200 first: A holds no lease any more, so the batch stays pending (B's).
    heldA.release();
    await eventually(() => warningsA.length === 1, 10_000, "A's warning");
    await a.idle();
    expect(await s.outbox.countPending()).toBe(2);
    heldB.release();
    await eventually(async () => (await s.outbox.countPending()) === 0, 10_000, "B acknowledged");
    await Promise.all([a.stop(), b.stop()]);

    const [first, again] = receiver.posts;
    expect(receiver.posts).toHaveLength(2);
    expect(again!.headers["webhook-id"]).toBe(first!.headers["webhook-id"]!);
    expect(ids(first!.body.events)).toEqual(ids(recorded));
    expect(ids(again!.body.events)).toEqual(ids(recorded));
    expect(warningsA).toMatchObject([{ msg: LEASE_LOST, batch: first!.headers["webhook-id"] }]);
    expect(warningsB).toEqual([]);
  });

  engine.test("a dispatcher whose lease ran out cannot schedule a retry either", async () => {
    await s.events.record([ev("m1", "registration", clock.nowMs())]);
    const warningsA: { msg: string; batch?: string }[] = [];
    const a = dispatcher(s.outbox, config, clock, { warnings: warningsA });
    const b = dispatcher(second.repo, config, clock);
    const heldA = receiver.holdNext();
    a.start();
    await heldA.arrived;
    clock.advance(LEASE_MS);
    b.start();
    await eventually(async () => (await s.outbox.countPending()) === 0, 10_000, "B acknowledged");
    // A's receiver fails it: A's retry would make the sent batch pending again, were it recorded.
    receiver.script.push(503);
    heldA.release();
    await eventually(() => warningsA.length === 1, 10_000, "A's warning");
    await Promise.all([a.stop(), b.stop()]);
    expect(warningsA.map((w) => w.msg)).toEqual([LEASE_LOST]);
    expect(receiver.posts.map((p) => p.status)).toEqual([200, 503]);
    expect(await s.outbox.countPending()).toBe(0);
  });

  engine.test("retry now while this node's POST is in flight does not post the batch twice", async () => {
    await s.events.record([ev("m1", "registration", clock.nowMs()), ev("m2", "registration", clock.nowMs())]);
    const warnings: { msg: string }[] = [];
    const d = dispatcher(s.outbox, config, clock, { warnings });
    const held = receiver.holdNext();
    d.start();
    await held.arrived;
    expect(await d.retryNow(OUTBOUND[0]!)).toBe(2);
    held.release();
    await eventually(async () => (await s.outbox.countPending()) === 0, 10_000, "the batch acknowledged");
    await d.stop();
    // Had "retry now" ended the lease, the batch would have been refused its finish and posted again before its events counted as sent.
    expect(receiver.posts).toHaveLength(1);
    expect(warnings).toEqual([]);
  });

  // Several nodes are a PostgreSQL setup (on SQLite two dispatchers would share one process, whose first claims take every account).
  if (engine.name !== "PostgreSQL") return;
  engine.test(
    "two nodes post the events of many messages to one receiver: every event once, each message's events in order",
    async () => {
      for (const m of MESSAGES) await addMessage(s.handle, m);
      const small = configFor(receiver, 5);
      const warnings: { msg: string }[] = [];
      const a = dispatcher(s.outbox, small, systemClock, { warnings, userAgent: "node-a" });
      const b = dispatcher(second.repo, small, systemClock, { warnings, userAgent: "node-b" });
      const recorded: MessageEvent[] = [];
      const record = async (kind: NewEvent["kind"], messages: SentMessage[]) =>
        recorded.push(...(await s.events.record(messages.map((m) => ev(m.id, kind, Date.now())))));
      const [first, rest] = [
        MESSAGES.filter((m) => m.outboundAccountId === OUTBOUND[0]),
        MESSAGES.filter((m) => m.outboundAccountId !== OUTBOUND[0]),
      ];
      // Both nodes take part: A posts the first account's first batch and its answer waits
      // until B, started once the other accounts have events, has posted theirs (A's next
      // look is its idle poll, a second later).
      const heldA = receiver.holdNext((headers) => headers["user-agent"] === "node-a");
      await record("registration", first);
      a.start();
      await heldA.arrived;
      await record("registration", rest);
      b.start();
      await eventually(() => receiver.posts.some((p) => p.headers["user-agent"] === "node-b"), 10_000, "a POST of node B");
      heldA.release();
      // Then events come a kind at a time, half the messages at a time, each part kicking both
      // nodes (as the node that records events kicks its own dispatcher).
      for (const kind of KINDS.slice(1)) {
        for (const part of [MESSAGES.slice(0, MESSAGES.length / 2), MESSAGES.slice(MESSAGES.length / 2)]) {
          await record(kind, part);
          a.kick();
          b.kick();
        }
      }
      await eventually(async () => (await s.outbox.countPending()) === 0, 30_000, "every event acknowledged");
      await Promise.all([a.stop(), b.stop()]);

      const posted = receiver.posts.flatMap((p) => p.body.events as { id: string; message_id: string; kind: string }[]);
      expect(posted.map((e) => e.id).sort()).toEqual(ids(recorded).sort());
      for (const m of MESSAGES)
        expect({ message: m.id, kinds: posted.filter((e) => e.message_id === m.id).map((e) => e.kind) }).toEqual({
          message: m.id,
          kinds: KINDS,
        });
      expect(receiver.posts.every((p) => p.verified && p.status === 200)).toBe(true);
      expect(new Set(receiver.posts.map((p) => p.headers["user-agent"]))).toEqual(new Set(["node-a", "node-b"]));
      expect(warnings).toEqual([]);
    },
    60_000,
  );
});
